// The binary workload reader (load_binary_workload): the whole input is the file. Seeds are
// written by write_binary_workload, with stored and with generated features.
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/small_dataset.hpp"
#include "workloads/binary_format.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  std::vector<std::string> seeds;
  for (const bool stored : {true, false}) {
    seeds.push_back(bytes_written_by("seed.bin", [&](const std::filesystem::path& path) {
      write_binary_workload(small_generated_dataset(stored), path);
    }));
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The summary walks what was loaded, so that a check the loader skipped shows here.
  gnnbed::fuzz::read_input_as_file(
      data, size, "workload.bin",
      [](const std::filesystem::path& path) { gnnbed::load_binary_workload(path).summary(); });
  return 0;
}
