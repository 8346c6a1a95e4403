#include "exec/calibration/speed_probe.hpp"

#include <string>
#include <unordered_map>

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::vector<ComputeCase> probe_cases(bool quick) {
  // The validation's workloads: about 100 features, hidden 16 to 128, fanouts of (15, 10).
  const int features = 128;
  const int batch = quick ? 32 : 512;
  const std::vector<int> fanouts = quick ? std::vector<int>{10, 5} : std::vector<int>{15, 10};
  std::vector<ComputeCase> probes;
  for (const ComputeCase& c : compute_cases(quick, 1)) {
    if (c.model == "sage" && c.feature_dim == features && c.batch_size == batch &&
        c.fanouts == fanouts && c.feature_density == 1) {
      probes.push_back(c);
    }
  }
  if (probes.empty()) throw Error("probe_cases: no compute case of the probe's shape");
  return probes;
}

nlohmann::json SpeedProbe::to_json() const {
  return {{"matched_ops", matched_ops},
          {"now_seconds", now_seconds},
          {"then_seconds", then_seconds},
          {"compute_time_ratio", compute_time_ratio()}};
}

SpeedProbe compare_with_calibration(const SamplesByKind& now, const nlohmann::json& fits) {
  std::unordered_map<std::string, double> then;
  for (const auto& [kind, fit] : fits.items()) {
    if (!fit.is_object() || !fit.contains("samples")) continue;
    for (const auto& sample : fit["samples"]) {
      then[sample.at("label").get<std::string>()] = sample.at("measured_seconds").get<double>();
    }
  }
  SpeedProbe probe;
  for (const std::vector<CostSample>& kind : now) {
    for (const CostSample& sample : kind) {
      const auto found = then.find(sample.label);
      if (found == then.end()) {
        throw Error("the calibration has no sample of '" + sample.label +
                    "': probe with the case set (--quick or not) it was taken with");
      }
      ++probe.matched_ops;
      probe.now_seconds += sample.seconds;
      probe.then_seconds += found->second;
    }
  }
  if (probe.matched_ops == 0 || !(probe.then_seconds > 0)) {
    throw Error("the probe timed no op the calibration has a positive time for");
  }
  return probe;
}

}  // namespace gnnbed
