#pragma once
// How fast this machine computes now against when a calibration was taken. A virtual machine's
// speed drifts (other tenants, the host's frequency): the same configuration measured minutes
// apart differed by up to 28 % (docs/validation.md), while a calibration records one moment. A
// probe times a few of the calibration's compute cases again, through the same code, and compares
// each op's time with the calibration's sample of the same op; the simulator's
// ClusterSpec::compute_time_factor applies the ratio.
#include <nlohmann/json.hpp>
#include <vector>

#include "exec/calibration/op_benchmark.hpp"

namespace gnnbed {

// Cases of compute_cases(quick, 1) that a probe times again: mid-sized iterations of both
// strategies, seconds in all.
std::vector<ComputeCase> probe_cases(bool quick);

struct SpeedProbe {
  int matched_ops = 0;
  double now_seconds = 0;   // the ops' times now, summed
  double then_seconds = 0;  // the same ops' times in the calibration
  // now / then: above 1 the machine computes slower than when it was calibrated.
  double compute_time_ratio() const { return now_seconds / then_seconds; }
  nlohmann::json to_json() const;
};

// `now`: the samples of the probe's cases; `fits`: a calibration's (Calibration::fits: per op
// kind, "samples" of {"label", "measured_seconds"}). Every sample of `now` must have its label in
// `fits`; throws Error naming the first that has not (a calibration taken with other cases).
SpeedProbe compare_with_calibration(const SamplesByKind& now, const nlohmann::json& fits);

}  // namespace gnnbed
