// Pipelined plans under mpiexec, on every rank count ctest runs them with. P3's pipelining: two
// epochs of pipelined p3 end with the weights of a single-process reference of the stale update
// w(t+1) = w(t) - a * grad f(w(t-3)) on the same mini-batches (and measurably not with those of
// the update without staleness), the transport moves exactly the planned bytes, each round plans
// the next mini-batch before its stages run, and the stash is what the simulator charges for it.
// dgl-pull's prefetching: the same losses and weights as without it, bit for bit, with no stash.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/distributed/distributed_trainer.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/train/minibatch_step.hpp"
#include "exec/train/optimizer.hpp"
#include "exec/train/trainer.hpp"
#include "strategies/model_ops.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/p3_experiment.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig pipelined_p3(int batch_size, const std::string& model) {
  ExperimentConfig config = testing::p3_cora_experiment(batch_size, {10, 5}, true);
  config.model.kind = model;
  config.training.seed = 4;
  return config;
}

std::vector<Matrix> values_of(const std::vector<Parameter*>& parameters) {
  std::vector<Matrix> values;
  for (const Parameter* p : parameters) values.push_back(p->value);
  return values;
}

void set_values(const std::vector<Parameter*>& parameters, const std::vector<Matrix>& values) {
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i]->value = values[i];
}

// The single-process reference: every step's gradient over every rank's mini-batch, computed
// with the weights `staleness` steps old, applied to the current weights.
std::vector<Matrix> reference_weights(const ExperimentConfig& config,
                                      const StrategyContext& context, int epochs, int staleness) {
  Model model(context.model, model_seed(config.training));
  const std::vector<Parameter*> parameters = model.parameters();
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(config.training);
  const NeighborSampler sampler(cora().graph, config.training.fanouts,
                                sampler_seed(config.training));
  const BatchSchedule schedule(cora().split.train, context.partition, config.training.batch_size,
                               config.training.seed);
  std::vector<std::vector<Matrix>> versions = {values_of(parameters)};  // w(0), w(1), ...
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    for (int i = 0; i < schedule.iterations_per_epoch(); ++i) {
      const std::int64_t t = schedule.global_step(epoch, i);
      const std::vector<Matrix> current = values_of(parameters);
      set_values(parameters,
                 versions[static_cast<std::size_t>(std::max<std::int64_t>(0, t - staleness))]);
      model.zero_grad();
      const double scale = 1.0 / static_cast<double>(schedule.seeds_in_iteration(epoch, i));
      for (int r = 0; r < context.num_ranks; ++r) {
        const MiniBatch batch =
            sampler.sample(schedule.seeds(r, epoch, i), schedule.batch_key(epoch, i));
        accumulate_gradients(model, *cora().features, cora().labels.span(), batch, scale,
                             schedule.dropout_key(epoch, i));
      }
      set_values(parameters, current);
      apply_weight_decay(parameters, config.training);
      optimizer->step(parameters);
      versions.push_back(values_of(parameters));
    }
  }
  return versions.back();
}

double largest_difference(const std::vector<Parameter>& weights,
                          const std::vector<Matrix>& expected,
                          const std::vector<ParameterSpec>& order) {
  double largest = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto match = std::find_if(weights.begin(), weights.end(),
                                    [&](const Parameter& p) { return p.name == order[k].name; });
    EXPECT_NE(match, weights.end()) << order[k].name;
    if (match == weights.end()) continue;
    for (std::int64_t e = 0; e < expected[k].size(); ++e) {
      largest = std::max(
          largest, static_cast<double>(std::abs(match->value.data()[e] - expected[k].data()[e])));
    }
  }
  return largest;
}

class Pipelining : public ::testing::TestWithParam<const char*> {};

// GAT's first layer syncs its scores within stage 0 and their gradients within stage 2.
TEST_P(Pipelining, TwoEpochsGiveTheWeightsOfTheStaleSingleProcessUpdate) {
  MpiTransport transport;
  const ExperimentConfig config = pipelined_p3(8, GetParam());
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  ASSERT_GE(engine.schedule().iterations_per_epoch(), 5) << "fills the pipeline";
  const TrafficBytes sent_before = transport.bytes_sent();
  TrafficBytes planned;
  const Stopwatch clock;
  constexpr int kEpochs = 2;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    const std::vector<IterationRun> runs = engine.run_epoch(epoch, clock);
    ASSERT_EQ(static_cast<int>(runs.size()), engine.schedule().iterations_per_epoch());
    for (const IterationRun& run : runs) {
      planned += run.plan.bytes_sent();
      // Every op after the prologue ran, once.
      const auto prologue = static_cast<std::size_t>(run.plan.prologue_ops);
      EXPECT_EQ(run.outcome.records.size(), run.plan.ops.size() - prologue) << run.plan.iteration;
    }
    // Round k samples and announces mini-batch k + 1 before it runs its stages (plan.hpp).
    for (std::size_t k = 0; k + 1 < runs.size(); ++k) {
      ASSERT_FALSE(runs[k].outcome.records.empty());
      const auto first_op = std::min_element(
          runs[k].outcome.records.begin(), runs[k].outcome.records.end(),
          [](const OpRecord& a, const OpRecord& b) { return a.start_seconds < b.start_seconds; });
      EXPECT_LE(runs[k + 1].announce_start + runs[k + 1].announce_seconds, first_op->start_seconds)
          << "epoch " << epoch << " round " << k;
    }
  }
  EXPECT_EQ(transport.bytes_sent() - sent_before, planned) << "bytes sent: transport vs plans";
  EXPECT_EQ(engine.executor().in_flight(), 0);

  const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);
  const std::vector<ParameterSpec> order = full_model_parameters(context.model);
  const std::vector<Matrix> stale = reference_weights(config, context, kEpochs, kPipelineDepth);
  const std::vector<Matrix> fresh = reference_weights(config, context, kEpochs, 0);
  const double error = largest_difference(weights, stale, order);
  const double staleness_effect = largest_difference(weights, fresh, order);
  std::printf(
      "rank %d: largest difference to the stale reference %.3g, to the update without "
      "staleness %.3g\n",
      transport.rank(), error, staleness_effect);
  EXPECT_LT(error, 1e-4);
  EXPECT_GT(staleness_effect, 100 * error + 1e-4) << "the check could not tell staleness apart";

  // The stash: 4 mini-batches' weights and gradients plus one version waiting for its mini-batch.
  std::int64_t held = 0;
  for (const ParameterSpec& p : engine.executor().parameter_specs())
    held += kFloatBytes * p.local_elements();
  EXPECT_EQ(engine.executor().stash_peak_bytes(), (2 * (kPipelineDepth + 1) + 1) * held);
}

struct TrainedRun {
  std::vector<double> losses;  // this rank's, per iteration
  std::vector<Parameter> weights;
  std::int64_t stash_peak_bytes = 0;
};

TrainedRun train_dgl_pull(MpiTransport& transport, const std::string& model, bool prefetch) {
  ExperimentConfig config = pipelined_p3(8, model);
  config.distribution.strategy = "dgl-pull";
  config.distribution.pipeline = false;
  config.distribution.prefetch = prefetch;
  const StrategyContext context = make_strategy_context(config, cora(), transport.size());
  RankEngine engine(config, context, cora(), transport);
  const TrafficBytes sent_before = transport.bytes_sent();
  TrafficBytes planned;
  TrainedRun trained;
  const Stopwatch clock;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    for (const IterationRun& run : engine.run_epoch(epoch, clock)) {
      EXPECT_EQ(run.plan.pipeline_depth, prefetch ? 1 : 0);
      EXPECT_EQ(run.plan.weight_staleness(), 0);
      EXPECT_EQ(run.outcome.records.size(),
                run.plan.ops.size() - static_cast<std::size_t>(run.plan.prologue_ops));
      planned += run.plan.bytes_sent();
      trained.losses.push_back(run.outcome.loss);
    }
  }
  EXPECT_EQ(transport.bytes_sent() - sent_before, planned) << "bytes sent: transport vs plans";
  EXPECT_EQ(engine.executor().in_flight(), 0);
  trained.weights = engine.executor().gather_full_parameters(false);
  trained.stash_peak_bytes = engine.executor().stash_peak_bytes();
  return trained;
}

class Prefetching : public ::testing::TestWithParam<const char*> {};

// The pull of mini-batch k + 1 is in flight while k computes, yet every mini-batch reads the
// weights after the step before it: nothing but the timing may change.
TEST_P(Prefetching, DglPullTrainsTheSameWeightsWithTheNextPullInFlight) {
  MpiTransport transport;
  const TrainedRun plain = train_dgl_pull(transport, GetParam(), false);
  const TrainedRun prefetched = train_dgl_pull(transport, GetParam(), true);
  ASSERT_GE(plain.losses.size(), 10u) << "enough iterations to overlap";
  EXPECT_EQ(prefetched.losses, plain.losses);
  ASSERT_EQ(prefetched.weights.size(), plain.weights.size());
  for (std::size_t k = 0; k < plain.weights.size(); ++k) {
    EXPECT_EQ(prefetched.weights[k].value.values().size(), plain.weights[k].value.values().size());
    EXPECT_TRUE(std::equal(plain.weights[k].value.values().begin(),
                           plain.weights[k].value.values().end(),
                           prefetched.weights[k].value.values().begin()))
        << plain.weights[k].name;
  }
  EXPECT_EQ(prefetched.stash_peak_bytes, 0) << "no weight version is stashed";
}

INSTANTIATE_TEST_SUITE_P(Models, Prefetching, ::testing::Values("sage", "gat"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param);
                         });

INSTANTIATE_TEST_SUITE_P(Models, Pipelining, ::testing::Values("sage", "gat"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param);
                         });

}  // namespace
}  // namespace gnnbed
