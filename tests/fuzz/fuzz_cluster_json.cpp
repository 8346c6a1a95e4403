// The cluster reader (load_cluster over a JSON file): the whole input is the file. Seeds are the
// shipped presets.
#include "sim/cluster.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  std::vector<std::string> seeds;
  for (const std::string& name : cluster_preset_names()) {
    seeds.push_back(read_whole_file(cluster_preset_directory() / (name + ".json")));
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gnnbed::fuzz::read_input_as_file(
      data, size, "cluster.json",
      [](const std::filesystem::path& path) { gnnbed::load_cluster(path.string(), {}); });
  return 0;
}
