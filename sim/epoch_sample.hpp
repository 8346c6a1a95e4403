#pragma once
// Epochs from samples (docs/simulator.md, "Epochs from samples"): when an epoch has too many
// iterations to replay whole, the simulator replays a stratified sample of them and extrapolates,
// with a 95 % confidence interval.
//
// The design: the first iteration (it starts the pipelines and overlaps nothing before it) and the
// last (its batch is the remainder of the training nodes, usually smaller) stand for themselves;
// the iterations between them are cut into equal contiguous strata and one iteration is drawn
// uniformly from each, with an explicit seed. Each replayed iteration carries a weight: the number
// of the epoch's iterations it stands for. The epoch estimate is the weighted sum of the replayed
// iterations' times; its variance is estimated from successive differences between the strata's
// drawn iterations (the usual estimator for one draw per stratum), with the finite-population
// correction, and the interval uses Student's t with (strata - 1) degrees of freedom. Pure C++: no
// SimGrid here.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

namespace gnnbed {

struct EpochSample {
  int iterations_per_epoch = 0;
  std::vector<int> iterations;  // increasing: planned and replayed in this order
  std::vector<double> weights;  // per replayed iteration: the epoch iterations it stands for
  std::vector<int> strata;      // per replayed iteration: its stratum, or -1 (first, last, or all)
  int num_strata = 0;
  std::int64_t stratified_iterations = 0;  // iterations the strata cover
  // Consecutive epochs the iterations are replayed in, each epoch's in turn (over_epochs).
  int epochs = 1;

  bool whole_epoch() const {
    return static_cast<std::int64_t>(iterations.size()) ==
           static_cast<std::int64_t>(iterations_per_epoch) * epochs;
  }
};

// `sample_size` iterations of an epoch of `iterations_per_epoch` (0 or >= the epoch: all of
// them). Fewer than 4 leave fewer than 2 strata, so no interval (EpochEstimate says so). A
// pipelined plan of depth `drain` drains at the epoch's end, so its last iterations take less
// than those of the middle: the `drain` before the last are replayed too, each for itself, and
// the strata cover the middle before them.
EpochSample design_epoch_sample(int iterations_per_epoch, int sample_size, std::uint64_t seed,
                                int drain = 0);

// The sample with, before each of its iterations but the first, the `depth` iterations that
// precede it in the epoch (weight 0, stratum -1), so that a pipelined plan (depth mini-batches in
// flight behind each new one) replays every sampled iteration as in the whole epoch, behind the
// mini-batches it overlaps, and not behind the previous sampled one: without them the sampled
// iterations overlap each other as if adjacent (products-like, p3 pipelined, 6 of 13
// iterations: 1.09 s against the whole epoch's 1.56 s). The whole epoch where the warm-up
// iterations would cover it. With design_epoch_sample's `drain` = depth, the estimate of a
// pipelined epoch is the fill (the first iteration), the strata in steady state, and the drain.
EpochSample with_pipeline_warmup(const EpochSample& sample, int depth);

// Whole epochs replayed `epochs` times in a row (a strategy whose plans repeat every few epochs,
// Strategy::epoch_cycle): each replayed iteration stands for 1 / epochs of itself, so the estimate
// is the mean epoch of the cycle. Error for a sample of part of an epoch.
EpochSample over_epochs(const EpochSample& sample, int epochs);

// Per replayed iteration, the time it added to the replay: the replay's clock at the end of each
// iteration (a running maximum, so pipelined iterations that end out of order add nothing
// negative), the last one running to the makespan.
std::vector<double> iteration_durations(std::span<const double> iteration_end_seconds,
                                        double makespan_seconds);

struct EpochEstimate {
  double seconds = 0;
  bool exact = false;         // the whole epoch was replayed
  bool has_interval = false;  // exact, or at least 2 strata
  double standard_error = 0;  // when has_interval
  double low = 0, high = 0;   // 95 % interval, when has_interval
  int sampled_iterations = 0;
  int iterations_per_epoch = 0;

  nlohmann::json to_json() const;
};

// `seconds[i]`: what replayed iteration i took (iteration_durations).
EpochEstimate estimate_epoch(const EpochSample& sample, std::span<const double> seconds);

// Student's t quantile at 0.975 for `degrees` >= 1 degrees of freedom.
double student_t_975(int degrees);

}  // namespace gnnbed
