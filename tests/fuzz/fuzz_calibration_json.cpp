// The calibration reader (read_calibration): the whole input is the file. Seeds are written by
// write_calibration, from a preset's cost models, with and without a device link.
#include "sim/cluster.hpp"
#include "sim/cost_model/cost_model.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  std::vector<std::string> seeds;
  for (const char* preset : {"emulated-cluster", "nvlink-ib-400"}) {
    const ClusterSpec cluster = load_cluster(preset, {});
    Calibration calibration;
    calibration.cost_model = cluster.host_cost_model;
    calibration.network = {2e-5, 1.1e9};
    calibration.rank_speed_spread = 0.05;
    calibration.compute_jitter = 0.02;
    if (std::string(preset) == "nvlink-ib-400") calibration.device_link = {1e-5, 2.4e10};
    seeds.push_back(bytes_written_by("calibration.json", [&](const std::filesystem::path& path) {
      write_calibration(calibration, path);
    }));
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gnnbed::fuzz::read_input_as_file(
      data, size, "calibration.json",
      [](const std::filesystem::path& path) { gnnbed::read_calibration(path); });
  return 0;
}
