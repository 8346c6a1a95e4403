#include "tests/fuzz/fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <typeinfo>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  constexpr const char* kReaderMemoryBytes = "268435456";  // 256 MiB: well under libFuzzer's 2 GB
  setenv(gnnbed::kMemoryLimitVariable, kReaderMemoryBytes, /*replace=*/0);
  return 0;
}

namespace gnnbed::fuzz {

Scratch& Scratch::instance() {
  static Scratch scratch;
  return scratch;
}

Scratch::Scratch() {
  const std::filesystem::path shm = "/dev/shm";
  const std::filesystem::path base =
      std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  root_ = base / ("gnnbed-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root_);
}

Scratch::~Scratch() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

const std::filesystem::path& Scratch::fresh() {
  std::filesystem::remove_all(root_);
  std::filesystem::create_directories(root_);
  return root_;
}

std::filesystem::path Scratch::write(const std::filesystem::path& relative,
                                     std::string_view bytes) const {
  const std::filesystem::path path = root_ / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

void expect_only_gnnbed_errors(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error&) {
    // The reader named what is wrong: the answer bad bytes should get.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: the reader threw %s, not a gnnbed::Error: %s\n", typeid(e).name(),
                 e.what());
    std::abort();
  }
}

FileSetInput split_file_set_input(const std::uint8_t* data, std::size_t size,
                                  std::size_t num_files) {
  if (size == 0) return {};
  return {data[0] % num_files, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

std::string make_file_set_input(std::size_t file_index, std::string_view content) {
  std::string input(1, static_cast<char>(file_index));
  input.append(content);
  return input;
}

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz: cannot read the seed %s\n", path.c_str());
    std::abort();
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string bytes_written_by(const std::filesystem::path& name,
                             const std::function<void(const std::filesystem::path&)>& write) {
  const std::filesystem::path path = Scratch::instance().fresh() / name;
  write(path);
  return read_whole_file(path);
}

void read_input_as_file(const std::uint8_t* data, std::size_t size,
                        const std::filesystem::path& name,
                        const std::function<void(const std::filesystem::path&)>& read) {
  Scratch& scratch = Scratch::instance();
  scratch.fresh();
  const auto path =
      scratch.write(name, std::string_view(reinterpret_cast<const char*>(data), size));
  expect_only_gnnbed_errors([&] { read(path); });
}

std::vector<std::string> file_set_seeds(std::span<const NamedFile> files) {
  std::vector<std::string> seeds;
  for (std::size_t i = 0; i < files.size(); ++i) {
    seeds.push_back(make_file_set_input(i, files[i].content));
  }
  return seeds;
}

void read_input_as_file_set(const std::uint8_t* data, std::size_t size,
                            std::span<const NamedFile> files,
                            const std::function<void(const std::filesystem::path&)>& read) {
  const FileSetInput input = split_file_set_input(data, size, files.size());
  Scratch& scratch = Scratch::instance();
  const std::filesystem::path& folder = scratch.fresh();
  for (std::size_t i = 0; i < files.size(); ++i) {
    scratch.write(files[i].name, i == input.file_index ? input.content : files[i].content);
  }
  expect_only_gnnbed_errors([&] { read(folder); });
}

}  // namespace gnnbed::fuzz
