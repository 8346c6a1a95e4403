#pragma once
// Micro-benchmarks of compute ops for calibration, run through the code run_experiment runs:
// every case is a one-rank training iteration (RankEngine: sampling, the strategy's plan, the
// PlanExecutor's kernels on the CPU or CUDA backend) on a generated graph with stored features,
// timed with the nccl-tests discipline: warm-up iterations, a barrier, a timed loop, the mean per
// op, the maximum over ranks. Every rank runs the same case at the same time (so ranks compete for
// the machine as they do in training), each on its own one-rank transport.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exec/kernels/compute_backend.hpp"
#include "exec/transport.hpp"
#include "sim/cost_model/cost_fit.hpp"
#include "strategies/plan/plan.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

struct OpRecord;  // exec/distributed/plan_executor.hpp

struct ComputeCase {
  std::string strategy;  // "dgl-pull" (whole layers), "p3" (partial first layer) or "roc"
                         // (full graph: batch_size 0)
  std::string model;     // "gcn" or "sage"
  int feature_dim = 0;
  int hidden = 0;
  int num_classes = 0;  // the last layer's width
  int batch_size = 0;
  std::vector<int> fanouts;
  // The ranks the plans are made for: 1 (every rank runs a one-rank iteration on its own), or all
  // the calibrating ranks together (a distributed iteration, whose assembly scatters rows that
  // arrived over the transport, out of cache, among local ones).
  int ranks = 1;
  // The fraction of feature entries that are nonzero: 1, or a bag-of-words-like few percent
  // (dropout skips groups of zeros; these cases tell its hashing and its bytes apart).
  double feature_density = 1;
  // The features stored as sparse rows (as loaders keep bag-of-words files): the plans gather,
  // mask and multiply their entries. Otherwise dense rows holding the zeros.
  bool sparse_rows = false;
  // Times the run's evaluation plan (strategies/inference.hpp: full neighbourhoods, the products
  // of narrowing layers) instead of a training iteration: its transform, aggregate_transformed
  // and concat_columns ops appear nowhere else.
  bool evaluation = false;

  std::string describe() const;  // "dgl-pull sage F256 H16 C4 b512 f[15,10]" (+ " d0.02",
                                 // " sparse", " 2 ranks")
};

// The cases calibrate runs: both strategies and models, widths that put each layer's weight
// product before and after aggregation, and batch sizes and fanouts from a few dozen to thousands
// of nodes; with `world_ranks` > 1, also dgl-pull iterations over all of them. `quick`: a few
// small cases (for tests).
std::vector<ComputeCase> compute_cases(bool quick, int world_ranks);

struct ComputeRepetitions {
  int warmup = 2;
  int timed = 5;
};

// Ops shorter than this are left out of the compute jitter: the clock's and the caches' noise on
// a few microseconds says nothing about how training's millisecond ops vary.
inline constexpr double kShortestJitterOpSeconds = 1e-3;

// The simulator's ClusterSpec::compute_jitter from timed runs of one plan on several ranks,
// `seconds[r][k][i]` rank r's time of op i in run k: the standard deviation of an op's log time
// from run to run on one rank, beyond what the ranks' runs shared at the time. Over the ops of at
// least kShortestJitterOpSeconds on every rank in every run, x = log t less its mean over the runs
// (the op's work on that rank) and its mean over the ranks at that run (what the machine did to
// all of them at once); for K runs and R ranks its variance is jitter^2 (1 - 1/K)(1 - 1/R). Empty
// with fewer than 2 ranks or runs, or when no op is long enough.
std::optional<double> compute_jitter_of(
    const std::vector<std::vector<std::vector<double>>>& seconds);

using SamplesByKind = std::array<std::vector<CostSample>, kNumOpKinds>;

struct CaseTiming {
  double iteration_seconds = 0;  // mean, slowest rank
  // A case of several ranks: how far apart their compute times were, as the rank speed spread
  // (ClusterSpec::rank_speed_spread) whose fastest and slowest ranks are as far apart.
  std::optional<double> rank_speed_spread;
  // A case of several ranks: how much an op's time varied from run to run on one rank, as the
  // log-sd of ClusterSpec::compute_jitter; empty when none of its ops ran long enough to tell.
  std::optional<double> compute_jitter;
};

class OpBenchmark {
 public:
  // The graph every case samples from: a CSBM graph of `num_nodes` nodes (half of them training
  // nodes) with `average_degree`, from `seed`.
  OpBenchmark(std::int64_t num_nodes, double average_degree, std::uint64_t seed);

  // Collective over `world` (every rank runs the same case); `local` is this rank's one-rank
  // transport (the case's transport unless it spans the world), `backend` where the ops run (the
  // CPU, or the rank's GPU). Appends one sample per costed op of the case's plan to `samples`, with
  // the time of the slowest rank.
  CaseTiming run(const ComputeCase& test_case, const ComputeRepetitions& repetitions,
                 Transport& local, Transport& world, ComputeBackend& backend,
                 SamplesByKind& samples);

 private:
  // The workload with `feature_dim` stored features of `density` and `num_classes` classes
  // (labels unchanged).
  const Dataset& dataset(int feature_dim, int num_classes, double density, bool sparse_rows);
  // The case's timed runs: its plan, and per run every op's seconds on this rank.
  struct TimedRuns {
    Plan plan;
    std::vector<std::vector<double>> seconds;  // [timed run][op]
    double loop_seconds = 0;                   // the timed runs together, on this rank
    // Adds a timed run: its records' seconds per op of `plan`.
    std::vector<double>& add_run(const std::vector<OpRecord>& records, std::size_t num_ops);
  };
  TimedRuns time_iterations(const ComputeCase& test_case, const ComputeRepetitions& repetitions,
                            Transport& transport, Transport& world, ComputeBackend& backend);
  TimedRuns time_evaluations(const ComputeCase& test_case, const ComputeRepetitions& repetitions,
                             Transport& transport, Transport& world);

  Dataset base_;
  std::uint64_t seed_;
  std::map<std::tuple<int, int, double, bool>, Dataset> datasets_;
};

}  // namespace gnnbed
