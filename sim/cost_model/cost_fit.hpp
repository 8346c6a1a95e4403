#pragma once
// Fitting the cost model to measurements (calibration). For one op kind, time = fixed_seconds +
// sum over its work terms of work / rate (sim/cost_model/cost_model.hpp); the fit finds the fixed
// cost and the seconds per unit of every work term (1 / rate) by least squares on the *relative*
// error, (predicted - measured) / measured, so that small and large ops count alike, with every
// coefficient non-negative (a negative cost per FLOP means nothing). Only the terms whose work is
// non-zero in some sample are fitted. The network's latency and bandwidth are the same fit with
// one term: latency + bytes / bandwidth.
//
// Work terms whose samples are exactly proportional (an optimizer step's FLOPs and bytes are both
// a multiple of its parameter count) cannot be told apart: their joint cost is fitted once and
// split evenly between them, and the fit says so in `notes`.
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "sim/cost_model/cost_model.hpp"

namespace gnnbed {

struct CostSample {
  std::string label;  // what was measured, for the report
  OpWork work;
  double seconds = 0;  // measured
  // The op's rows read where indices point and their table (Op::gathered_rows,
  // gathered_table_bytes): reported with the sample, so that a fit with another cache size can be
  // made from the file.
  double gathered_rows = 0;
  double gathered_table_bytes = 0;
};

struct FitSummary {
  double median_abs_relative_residual = 0;
  double max_abs_relative_residual = 0;
};

struct CostFit {
  OpCost cost;
  std::vector<double> predicted_seconds;   // per sample
  std::vector<double> relative_residuals;  // per sample: (predicted - measured) / measured
  FitSummary summary;
  std::vector<std::string> notes;  // proportional or unresolved terms

  // {"cost": ..., "median_abs_relative_residual": ..., "max_abs_relative_residual": ...,
  //  "notes": [...], "samples": [{"label", "work": {...}, "measured_seconds",
  //  "predicted_seconds", "relative_residual"}, ...]}
  nlohmann::json to_json(std::span<const CostSample> samples) const;
};

// The rate given to a work term whose fitted cost is zero (its time is below what the samples
// resolve): the largest double, so the term costs nothing yet an op with that work stays costed.
inline constexpr double kUnresolvedRate = 1.7976931348623157e308;

// Throws Error when the samples cannot determine the cost: none, a measured time that is not
// positive and finite, negative or non-finite work, or work that does not vary enough to tell
// the fixed cost and the rates apart (for example every sample of the same size).
CostFit fit_op_cost(std::span<const CostSample> samples);

// One-way transfer time of a message of `bytes` between two ranks.
struct TransferSample {
  std::string label;
  double bytes = 0;
  double seconds = 0;
};

struct NetworkFit {
  NetworkCalibration network;
  std::vector<double> predicted_seconds;
  std::vector<double> relative_residuals;
  FitSummary summary;

  nlohmann::json to_json(std::span<const TransferSample> samples) const;
};

// latency + bytes / bandwidth; throws Error as fit_op_cost does, and when the bandwidth cannot be
// resolved (transfer time does not grow with size).
NetworkFit fit_network(std::span<const TransferSample> samples);

// The median and largest absolute value of `residuals` (zeros when empty).
FitSummary summarize_residuals(std::span<const double> residuals);

}  // namespace gnnbed
