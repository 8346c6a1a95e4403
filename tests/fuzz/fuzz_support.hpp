#pragma once
// What every file reader's fuzz target shares. A target defines LLVMFuzzerTestOneInput (libFuzzer's
// entry point: one input, any bytes) and fuzz_seed_inputs (valid inputs, written by the project's
// own writers or in its documented layouts, for the fuzzer to start from). The reader's contract
// under test: it returns, or throws gnnbed::Error naming what is wrong. Anything else (a crash, a
// sanitizer report, another exception type such as std::bad_alloc) is a defect, and aborts.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Called once before the first input (by libFuzzer, and by the replay driver): limits the memory
// the readers may ask for (GNNBED_MEMORY_LIMIT_BYTES, unless the environment sets it), so that a
// size in an input that passes the memory check is one the fuzzer can allocate quickly, and one
// that does not is answered with the readers' own error.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs();

// A scratch folder of this process (in /dev/shm when there is one: inputs are written for every
// run), emptied on demand and removed at exit.
class Scratch {
 public:
  static Scratch& instance();
  // An empty folder for one input.
  const std::filesystem::path& fresh();
  // Writes `bytes` to fresh()/relative, creating folders on the way; returns the path.
  std::filesystem::path write(const std::filesystem::path& relative, std::string_view bytes) const;
  ~Scratch();

 private:
  Scratch();
  std::filesystem::path root_;
};

// Runs a reader over one input: gnnbed::Error is the expected answer to bad bytes; any other
// exception aborts with its type and message.
void expect_only_gnnbed_errors(const std::function<void()>& read);

// An input that replaces one file of a set: its first byte picks the file (modulo the set's
// size), the rest is that file's content. Seeds are made with make_file_set_input.
struct FileSetInput {
  std::size_t file_index = 0;
  std::string_view content;
};
FileSetInput split_file_set_input(const std::uint8_t* data, std::size_t size,
                                  std::size_t num_files);
std::string make_file_set_input(std::size_t file_index, std::string_view content);

// A file's whole content (for seeds written by the project's own writers).
std::string read_whole_file(const std::filesystem::path& path);
// The bytes `write` writes to a file named `name` (in a fresh scratch folder).
std::string bytes_written_by(const std::filesystem::path& name,
                             const std::function<void(const std::filesystem::path&)>& write);

// One input as one whole file named `name`, given to `read`.
void read_input_as_file(const std::uint8_t* data, std::size_t size,
                        const std::filesystem::path& name,
                        const std::function<void(const std::filesystem::path&)>& read);

// A folder of files of which an input replaces one (split_file_set_input): the seeds are each
// file in turn, unchanged; reading writes the folder with the input's file replaced and gives
// the folder to `read`.
struct NamedFile {
  const char* name;  // relative to the folder
  const char* content;
};
std::vector<std::string> file_set_seeds(std::span<const NamedFile> files);
void read_input_as_file_set(const std::uint8_t* data, std::size_t size,
                            std::span<const NamedFile> files,
                            const std::function<void(const std::filesystem::path&)>& read);

}  // namespace gnnbed::fuzz
