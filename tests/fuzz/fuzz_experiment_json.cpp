// The experiment reader (resolve_experiment over a JSON file): the whole input is the file.
#include "strategies/config/experiment_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  ExperimentConfig defaults;
  ExperimentConfig p3 = defaults;
  p3.workload.source = "csbm";
  p3.workload.num_nodes = 1000;
  p3.model.kind = "gat";
  p3.training.batch_size = 64;
  p3.training.fanouts = {10, -1};
  p3.distribution.strategy = "p3";
  p3.distribution.pipeline = true;
  p3.distribution.cache_budget_bytes = 1 << 20;
  return {to_json(defaults).dump(2), to_json(p3).dump(), R"({"model": {"hidden": 64}})"};
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gnnbed::fuzz::read_input_as_file(
      data, size, "experiment.json",
      [](const std::filesystem::path& path) { gnnbed::resolve_experiment(path, {}); });
  return 0;
}
