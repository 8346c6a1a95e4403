#include "exec/calibration/op_benchmark.hpp"

#include <cmath>
#include <cstdio>

#include "exec/distributed/distributed_evaluation.hpp"
#include "exec/distributed/op_timing.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/nn/model.hpp"
#include "sim/cost_model/cost_model.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/generators.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

ExperimentConfig experiment_of(const ComputeCase& test_case, std::uint64_t seed) {
  ExperimentConfig config;
  config.model.kind = test_case.model;
  config.model.num_layers = static_cast<int>(test_case.fanouts.size());
  config.model.hidden = test_case.hidden;
  config.training.epochs = 1;
  config.training.batch_size = test_case.batch_size;
  config.training.fanouts = test_case.fanouts;
  config.training.seed = seed;
  config.distribution.strategy = test_case.strategy;
  return config;
}

// Collective: the spread that puts the model's fastest and slowest of world's ranks as far apart,
// relative to their mean, as their `busy_seconds`.
double measured_rank_speed_spread(double busy_seconds, Transport& world) {
  const int n = world.size();
  const double slowest = world.max_over_ranks(busy_seconds);
  const double fastest = -world.max_over_ranks(-busy_seconds);
  std::vector<float> total{static_cast<float>(busy_seconds)};
  TransferTiming ignored;
  world.all_reduce_sum(total, Traffic::gradients, ignored);
  const double mean = static_cast<double>(total[0]) / n;
  const double score_range = normal_order_score(n - 1, n) - normal_order_score(0, n);
  return mean > 0 ? (slowest - fastest) / (mean * score_range) : 0;
}

// Collective: the compute jitter (compute_jitter_of) of the timed runs of one plan,
// `run_seconds[k][i]` this rank's time of op i in run k, over the costed ops of every rank.
std::optional<double> measured_compute_jitter(const std::vector<std::vector<double>>& run_seconds,
                                              const Plan& plan, Transport& world) {
  std::vector<std::size_t> costed;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    if (is_costed(plan.ops[i].kind)) costed.push_back(i);
  }
  std::vector<float> mine;
  for (const std::vector<double>& run : run_seconds) {
    for (const std::size_t i : costed) mine.push_back(static_cast<float>(run[i]));
  }
  std::vector<std::vector<std::vector<double>>> seconds;  // [rank][run][costed op]
  for (const std::vector<float>& theirs : world.all_gather_control(mine)) {
    if (theirs.size() != mine.size()) {
      throw Error("compute jitter: the ranks' plans have different costed ops");
    }
    std::vector<std::vector<double>>& runs = seconds.emplace_back();
    for (std::size_t k = 0; k < run_seconds.size(); ++k) {
      runs.emplace_back(theirs.begin() + static_cast<std::ptrdiff_t>(k * costed.size()),
                        theirs.begin() + static_cast<std::ptrdiff_t>((k + 1) * costed.size()));
    }
  }
  return compute_jitter_of(seconds);
}

}  // namespace

std::optional<double> compute_jitter_of(
    const std::vector<std::vector<std::vector<double>>>& seconds) {
  const std::size_t ranks = seconds.size();
  const std::size_t runs = ranks > 0 ? seconds[0].size() : 0;
  const std::size_t ops = runs > 0 ? seconds[0][0].size() : 0;
  if (ranks < 2 || runs < 2) return std::nullopt;
  double squares = 0;
  std::size_t ops_used = 0;
  std::vector<std::vector<double>> x(ranks, std::vector<double>(runs));  // [rank][run]
  for (std::size_t i = 0; i < ops; ++i) {
    bool long_enough = true;
    for (const auto& rank_runs : seconds) {
      for (const auto& run : rank_runs) {
        long_enough = long_enough && run[i] >= kShortestJitterOpSeconds;
      }
    }
    if (!long_enough) continue;
    // The log time less its mean over the runs: what the op's work on that rank explains.
    for (std::size_t r = 0; r < ranks; ++r) {
      double mean = 0;
      for (std::size_t k = 0; k < runs; ++k) {
        x[r][k] = std::log(seconds[r][k][i]);
        mean += x[r][k] / static_cast<double>(runs);
      }
      for (double& value : x[r]) value -= mean;
    }
    // Less its mean over the ranks at each run: what the machine did to all of them at once.
    for (std::size_t k = 0; k < runs; ++k) {
      double shared = 0;
      for (std::size_t r = 0; r < ranks; ++r) shared += x[r][k] / static_cast<double>(ranks);
      for (std::size_t r = 0; r < ranks; ++r) squares += (x[r][k] - shared) * (x[r][k] - shared);
    }
    ++ops_used;
  }
  if (ops_used == 0) return std::nullopt;
  return std::sqrt(squares / (static_cast<double>(ops_used) * static_cast<double>(runs - 1) *
                              static_cast<double>(ranks - 1)));
}

std::string ComputeCase::describe() const {
  std::string text = strategy + " " + model + " F" + std::to_string(feature_dim) + " H" +
                     std::to_string(hidden) + " C" + std::to_string(num_classes) + " b" +
                     std::to_string(batch_size) + " f" + nlohmann::json(fanouts).dump();
  if (feature_density < 1) {
    char density[32];
    std::snprintf(density, sizeof(density), " d%g", feature_density);
    text.append(density);
  }
  if (sparse_rows) text.append(" sparse");
  if (ranks > 1) text.append(" ").append(std::to_string(ranks)).append(" ranks");
  if (evaluation) text.append(" evaluation");
  return text;
}

std::vector<ComputeCase> compute_cases(bool quick, int world_ranks) {
  // (features, hidden, classes): the first layer aggregates first (32 -> 128) or multiplies first
  // (256 -> 16, 512 -> 64); the second multiplies first (-> 4) or aggregates first (16 -> 32).
  struct Widths {
    int features, hidden, classes;
  };
  const std::vector<Widths> widths =
      quick ? std::vector<Widths>{{32, 64, 4}, {128, 16, 32}}
            : std::vector<Widths>{{32, 128, 4}, {256, 16, 4}, {128, 16, 32}, {512, 64, 16}};
  const std::vector<int> batches =
      quick ? std::vector<int>{32, 256} : std::vector<int>{64, 512, 2048};
  const std::vector<std::vector<int>> fanouts =
      quick ? std::vector<std::vector<int>>{{10, 5}}
            : std::vector<std::vector<int>>{{5, 5}, {15, 10}};
  std::vector<ComputeCase> cases;
  for (const char* strategy : {"dgl-pull", "p3"}) {
    for (const char* model : {"gcn", "sage"}) {
      for (const Widths& w : widths) {
        for (const int batch : batches) {
          for (const auto& f : fanouts) {
            cases.push_back({strategy, model, w.features, w.hidden, w.classes, batch, f});
          }
        }
      }
    }
  }
  // ROC's full-graph GCN: one step on the whole graph (its row gathers and scatters), at both
  // multiplication orders of the first layer.
  for (const Widths& w : {widths.front(), widths[quick ? 1 : 2]}) {
    cases.push_back({"roc", "gcn", w.features, w.hidden, w.classes, 0, {-1, -1}});
  }
  // Evaluation plans on one rank: with the features as P3 places them (column slices), at both
  // multiplication orders of the first layer: partial products summed at the owners, or every
  // column slice of the input rows side by side (two input widths, so that concat_columns' fit
  // has two sizes).
  std::vector<Widths> evaluation_widths = widths;
  evaluation_widths.push_back({16, 32, 4});
  for (const char* model : {"gcn", "sage"}) {
    for (const Widths& w : evaluation_widths) {
      // (The batch size and fanouts only size the training the case does not run.)
      ComputeCase c{"p3", model, w.features, w.hidden, w.classes, 64, {10, 5}};
      c.evaluation = true;
      cases.push_back(std::move(c));
    }
  }
  // Sparse features, as bag-of-words datasets have (Cora: 1.3 % nonzero), stored as sparse rows
  // (the first layer multiplies their entries; dropout hashes each) and as dense rows of zeros
  // (`workload.feature_rows` dense: dropout hashes only the groups holding a nonzero and streams
  // the rest, as P3's column slices of Cora do): dropout's samples need both, or its fit cannot
  // tell the bytes it streams from the hashes it draws.
  for (const char* model :
       quick ? std::vector<const char*>{"gcn"} : std::vector<const char*>{"gcn", "sage"}) {
    for (const int batch : quick ? std::vector<int>{32, 256} : std::vector<int>{64, 512}) {
      for (const bool sparse_rows : {true, false}) {
        ComputeCase c{"dgl-pull", model, quick ? 256 : 1024, 16, 8, batch, {10, 5}};
        c.feature_density = 0.02;
        c.sparse_rows = sparse_rows;
        cases.push_back(std::move(c));
      }
    }
  }
  // Distributed dgl-pull: its input block is assembled from local rows and rows received from
  // every other rank (scatter_rows), which one-rank plans do not do.
  if (world_ranks > 1) {
    for (const char* model :
         quick ? std::vector<const char*>{"gcn"} : std::vector<const char*>{"gcn", "sage"}) {
      for (const Widths& w : quick ? std::vector<Widths>{widths.front()}
                                   : std::vector<Widths>{widths[1], widths[3]}) {
        // Two sizes even when quick: these are scatter_rows' only samples.
        for (const int batch : quick ? std::vector<int>{32, 256} : std::vector<int>{512, 2048}) {
          ComputeCase c{"dgl-pull",
                        model,
                        w.features,
                        w.hidden,
                        w.classes,
                        batch,
                        quick ? std::vector<int>{10, 5} : std::vector<int>{15, 10}};
          c.ranks = world_ranks;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return cases;
}

OpBenchmark::OpBenchmark(std::int64_t num_nodes, double average_degree, std::uint64_t seed)
    : seed_(seed) {
  CsbmParams params;
  params.num_nodes = num_nodes;
  params.average_degree = average_degree;
  params.num_classes = 4;
  params.train_fraction = 0.5;
  params.val_fraction = 0.1;
  params.test_fraction = 0.1;
  params.seed = seed;
  base_ = generate_csbm(params);
}

const Dataset& OpBenchmark::dataset(int feature_dim, int num_classes, double density,
                                    bool sparse_rows) {
  const auto key = std::make_tuple(feature_dim, num_classes, density, sparse_rows);
  const auto found = datasets_.find(key);
  if (found != datasets_.end()) return found->second;
  // Stored features, as loaded workloads have them: generated ones cost a hash per entry read.
  const GeneratedFeatures generated(feature_dim, base_.labels, 0.5f, seed_);
  std::vector<NodeId> all(static_cast<std::size_t>(base_.num_nodes()));
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<NodeId>(v);
  std::vector<float> values(all.size() * static_cast<std::size_t>(feature_dim));
  generated.gather(all, values.data());
  if (density < 1) {
    // A seeded density fraction of the entries keeps its value; the others become zero.
    const auto kept = static_cast<std::uint64_t>(density * 65536.0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if ((hash_mix(seed_, 0xde75, static_cast<std::uint64_t>(i)) & 0xffff) >= kept) values[i] = 0;
    }
  }
  Dataset dataset = base_;
  const StoredFeatures stored(base_.num_nodes(), feature_dim,
                              SharedArray<float>(std::move(values)));
  dataset.features =
      sparse_rows ? std::shared_ptr<const FeatureStore>(
                        std::make_shared<SparseFeatures>(SparseFeatures::nonzeros_of(stored)))
                  : std::make_shared<StoredFeatures>(stored);
  dataset.num_classes = std::max(num_classes, base_.num_classes);
  return datasets_.emplace(key, std::move(dataset)).first->second;
}

std::vector<double>& OpBenchmark::TimedRuns::add_run(const std::vector<OpRecord>& records,
                                                     std::size_t num_ops) {
  std::vector<double>& run = seconds.emplace_back(num_ops, 0.0);
  for (const OpRecord& record : records) run[static_cast<std::size_t>(record.op)] += record.seconds;
  return run;
}

OpBenchmark::TimedRuns OpBenchmark::time_iterations(const ComputeCase& test_case,
                                                    const ComputeRepetitions& repetitions,
                                                    Transport& transport, Transport& world,
                                                    ComputeBackend& backend) {
  const ExperimentConfig config = experiment_of(test_case, seed_);
  const Dataset& data = dataset(test_case.feature_dim, test_case.num_classes,
                                test_case.feature_density, test_case.sparse_rows);
  const StrategyContext context = make_strategy_context(config, data, test_case.ranks);
  RankEngine engine(config, context, data, transport, backend);
  const Stopwatch clock;
  for (int w = 0; w < repetitions.warmup; ++w) engine.run_iteration(1, 0, clock);
  world.barrier();
  TimedRuns timed;
  const Stopwatch loop;
  for (int k = 0; k < repetitions.timed; ++k) {
    IterationRun run = engine.run_iteration(1, 0, clock);
    std::vector<double>& seconds = timed.add_run(run.outcome.records, run.plan.ops.size());
    for (const PrologueTiming& prologue : prologue_timings(run)) {
      seconds[prologue.op] = prologue.seconds;
    }
    timed.plan = std::move(run.plan);
  }
  timed.loop_seconds = loop.seconds();
  return timed;
}

OpBenchmark::TimedRuns OpBenchmark::time_evaluations(const ComputeCase& test_case,
                                                     const ComputeRepetitions& repetitions,
                                                     Transport& transport, Transport& world) {
  const ExperimentConfig config = experiment_of(test_case, seed_);
  const Dataset& data = dataset(test_case.feature_dim, test_case.num_classes,
                                test_case.feature_density, test_case.sparse_rows);
  const StrategyContext context = make_strategy_context(config, data, test_case.ranks);
  const int rank = transport.rank();
  const LocalStore store(data, context, rank, context.strategy->feature_placement(context, rank));
  DistributedEvaluator evaluator(context, store, transport);
  Model model(context.model, model_seed(config.training));
  std::vector<Parameter> values;
  for (const Parameter* p : model.parameters()) values.push_back(*p);
  for (int w = 0; w < repetitions.warmup; ++w) evaluator.logits(values);
  world.barrier();
  TimedRuns timed;
  timed.plan = evaluator.plan();
  const Stopwatch loop;
  for (int k = 0; k < repetitions.timed; ++k) {
    evaluator.logits(values);
    timed.add_run(evaluator.last_outcome().records, timed.plan.ops.size());
  }
  timed.loop_seconds = loop.seconds();
  return timed;
}

CaseTiming OpBenchmark::run(const ComputeCase& test_case, const ComputeRepetitions& repetitions,
                            Transport& local, Transport& world, ComputeBackend& backend,
                            SamplesByKind& samples) {
  if (test_case.ranks != 1 && test_case.ranks != world.size()) {
    throw Error("calibration case '" + test_case.describe() + "' is for " +
                std::to_string(test_case.ranks) + " ranks, not 1 or the " +
                std::to_string(world.size()) + " calibrating");
  }
  Transport& transport = test_case.ranks == 1 ? local : world;
  const TimedRuns timed = test_case.evaluation
                              ? time_evaluations(test_case, repetitions, transport, world)
                              : time_iterations(test_case, repetitions, transport, world, backend);
  const double iteration_seconds = world.max_over_ranks(timed.loop_seconds / repetitions.timed);
  const std::vector<std::vector<double>>& run_seconds = timed.seconds;

  const Plan& plan = timed.plan;
  // The per-op maxima below are one collective per op: every rank must have as many.
  const auto num_ops = static_cast<double>(plan.ops.size());
  if (world.max_over_ranks(num_ops) != -world.max_over_ranks(-num_ops)) {
    throw Error("calibration case '" + test_case.describe() +
                "': the ranks' plans have different numbers of ops");
  }
  const std::string name = test_case.describe();
  double busy_seconds = 0;  // this rank's, per iteration
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (!is_costed(op.kind)) continue;
    double mean_seconds = 0;
    for (const std::vector<double>& seconds : run_seconds) {
      mean_seconds += seconds[i] / repetitions.timed;
    }
    busy_seconds += mean_seconds;
    const double seconds = world.max_over_ranks(mean_seconds);
    samples[static_cast<std::size_t>(op.kind)].push_back(
        {name + ": " + op.label, work_of(op), seconds, static_cast<double>(op.gathered_rows),
         static_cast<double>(op.gathered_table_bytes)});
  }
  CaseTiming timing{iteration_seconds, std::nullopt, std::nullopt};
  if (test_case.ranks > 1) {
    timing.rank_speed_spread = measured_rank_speed_spread(busy_seconds, world);
    timing.compute_jitter = measured_compute_jitter(run_seconds, plan, world);
  }
  return timing;
}

}  // namespace gnnbed
