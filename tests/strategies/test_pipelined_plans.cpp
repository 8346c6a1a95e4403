// P3's pipelined plans, checked on the plans alone: the ops fall into P3's four phases as
// pipeline stages; the stage-0 layer ops of iteration i depend on the optimizer step of iteration
// i - 4 and every step on the previous one; in the static schedule (schedule_key) mini-batch t's
// first weight reads come after step t - 4 and before step t - 3, so the weights it reads are
// w(t - 3), as its plan's weight_version says; pipelined plans move the same bytes as plans
// without pipelining and round-trip through files; other strategies refuse pipelining.
// dgl-pull's prefetching plans start the pull in stage 0 and keep every op that touches the model
// in stage 1, so that their weights are never stale; the other strategies refuse prefetching.
#include <gtest/gtest.h>

#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/p3_experiment.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig p3_experiment(bool pipeline) {
  return testing::p3_cora_experiment(8, {10, 5}, pipeline);
}

constexpr int kRanks = 2;

// Every iteration's plans of epoch `epoch` (schedule seed 5, sampler seed 9).
std::vector<std::vector<Plan>> epoch_plans(const StrategyContext& context, int epoch) {
  const BatchSchedule schedule(cora().split.train, context.partition, context.training.batch_size,
                               context.training.seed);
  std::vector<std::vector<Plan>> iterations;
  for (int i = 0; i < schedule.iterations_per_epoch(); ++i) {
    iterations.push_back(
        plan_iteration(*context.strategy, context, cora().graph, schedule, 9, epoch, i));
  }
  return iterations;
}

int index_of_kind(const Plan& plan, OpKind kind) {
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    if (plan.ops[j].kind == kind) return static_cast<int>(j);
  }
  return -1;
}

TEST(PipelinedPlans, CarryP3sPhasesAsStagesAndDependenciesAcrossIterations) {
  const StrategyContext context = make_strategy_context(p3_experiment(true), cora(), kRanks);
  ASSERT_EQ(context.strategy->pipeline_depth(), 3);
  const auto iterations = epoch_plans(context, 2);
  ASSERT_GE(iterations.size(), 6u) << "enough iterations to fill the pipeline";
  const std::int64_t per_epoch = static_cast<std::int64_t>(iterations.size());
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    for (const Plan& plan : iterations[i]) {
      ASSERT_EQ(plan.pipeline_depth, 3);
      EXPECT_EQ(plan.step, per_epoch + static_cast<std::int64_t>(i)) << "epoch 2 follows epoch 1";
      EXPECT_EQ(plan.weight_version(), plan.step - 3);
      const int step = index_of_kind(plan, OpKind::optimizer_step);
      ASSERT_EQ(step, static_cast<int>(plan.ops.size()) - 1);
      EXPECT_EQ(plan.ops[static_cast<std::size_t>(step)].stage, 3);
      EXPECT_EQ(plan.op_labelled("pull partial activations").stage, 0);
      EXPECT_EQ(plan.op_labelled("layer0.sum_partials").stage, 1);
      EXPECT_EQ(plan.op_labelled("loss").stage, 1);
      EXPECT_EQ(plan.op_labelled("push layer0 gradients").stage, 1);
      EXPECT_EQ(plan.op_labelled("all_reduce gradients").stage, 2);
      int partial_forwards = 0;
      for (std::size_t j = 0; j < plan.ops.size(); ++j) {
        const Op& op = plan.ops[j];
        if (op.kind == OpKind::layer_backward && op.partial) {
          EXPECT_EQ(op.stage, 2) << op.label;
        }
        std::vector<IterationDep> expected;
        if (op.kind == OpKind::layer_forward && op.partial) {
          ++partial_forwards;
          EXPECT_EQ(op.stage, 0);
          if (i >= 4) expected.push_back({4, step});
        }
        if (op.kind == OpKind::optimizer_step && i >= 1) expected.push_back({1, step});
        EXPECT_EQ(op.iteration_deps, expected) << "iteration " << i << ", " << op.label;
        for (const IterationDep& dep : op.iteration_deps) {
          const Plan& earlier = iterations[i - static_cast<std::size_t>(dep.back)]
                                          [static_cast<std::size_t>(plan.rank)];
          EXPECT_EQ(earlier.ops[static_cast<std::size_t>(dep.op)].kind, OpKind::optimizer_step);
        }
      }
      EXPECT_EQ(partial_forwards, kRanks) << "one partial layer per rank's mini-batch";
      EXPECT_EQ(Plan::from_json(plan.to_json(), "test").to_json(), plan.to_json());
    }
  }
}

// Staleness exactly 3: in the static schedule both engines follow, mini-batch t's forward starts
// after the step of t - 4 (which makes w(t - 3)) and before the step of t - 3, and steps come in
// order; at the start of an epoch (drained pipeline) the plan names the stashed version.
TEST(PipelinedPlans, TheScheduleGivesEveryMiniBatchTheWeightsThreeStepsOld) {
  const StrategyContext context = make_strategy_context(p3_experiment(true), cora(), kRanks);
  const auto iterations = epoch_plans(context, 1);
  for (int r = 0; r < kRanks; ++r) {
    const auto plan_of = [&](std::size_t i) -> const Plan& {
      return iterations[i][static_cast<std::size_t>(r)];
    };
    const auto first_read = [&](std::size_t i) {
      const Plan& plan = plan_of(i);
      for (std::size_t j = 0; j < plan.ops.size(); ++j) {
        if (plan.ops[j].kind == OpKind::layer_forward)
          return schedule_key(plan, static_cast<int>(j));
      }
      ADD_FAILURE() << "no layer op";
      return ScheduleKey{};
    };
    const auto step_of = [&](std::size_t i) {
      const Plan& plan = plan_of(i);
      return schedule_key(plan, index_of_kind(plan, OpKind::optimizer_step));
    };
    for (std::size_t t = 0; t < iterations.size(); ++t) {
      EXPECT_EQ(plan_of(t).weight_version(), std::max<std::int64_t>(0, static_cast<int>(t) - 3));
      if (t >= 4) {
        EXPECT_LT(step_of(t - 4), first_read(t)) << "t = " << t;
      }
      if (t >= 3) {
        EXPECT_LT(first_read(t), step_of(t - 3)) << "t = " << t;
      }
      if (t >= 1) {
        EXPECT_LT(step_of(t - 1), step_of(t));
      }
      // Every later phase of t comes after its earlier ones and within 3 rounds.
      EXPECT_EQ(step_of(t).round, static_cast<std::int64_t>(t) + 3);
    }
  }
}

TEST(PipelinedPlans, MoveTheBytesOfPlansWithoutPipelining) {
  const StrategyContext pipelined = make_strategy_context(p3_experiment(true), cora(), 3);
  const StrategyContext plain = make_strategy_context(p3_experiment(false), cora(), 3);
  const auto a = epoch_plans(pipelined, 1);
  const auto b = epoch_plans(plain, 1);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t r = 0; r < a[i].size(); ++r) {
      EXPECT_EQ(a[i][r].bytes_sent(), b[i][r].bytes_sent());
      EXPECT_EQ(a[i][r].ops.size(), b[i][r].ops.size());
      EXPECT_EQ(b[i][r].pipeline_depth, 0);
      for (const Op& op : b[i][r].ops) {
        EXPECT_EQ(op.stage, 0);
        EXPECT_TRUE(op.iteration_deps.empty());
      }
    }
  }
}

// Planning `config` with `strategy` instead (full graph for roc) fails naming `field`.
void expect_refused(ExperimentConfig config, const std::string& strategy,
                    const std::string& field) {
  config.distribution.strategy = strategy;
  if (strategy == "roc") config.training.batch_size = 0;
  try {
    make_strategy_context(config, cora(), 2);
    ADD_FAILURE() << strategy << " accepted " << field;
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
  }
}

TEST(PipelinedPlans, OtherStrategiesRefusePipelining) {
  for (const std::string strategy : {"dgl-pull", "roc"}) {
    expect_refused(p3_experiment(true), strategy, "distribution.pipeline");
  }
}

TEST(PipelinedPlans, DglPullPrefetchesItsPullAndKeepsTheModelInTheLastStage) {
  ExperimentConfig config = p3_experiment(false);
  config.distribution.strategy = "dgl-pull";
  config.distribution.prefetch = true;
  const StrategyContext prefetching = make_strategy_context(config, cora(), kRanks);
  config.distribution.prefetch = false;
  const StrategyContext plain = make_strategy_context(config, cora(), kRanks);
  ASSERT_EQ(prefetching.strategy->pipeline_depth(), 1);
  const auto a = epoch_plans(prefetching, 2);
  const auto b = epoch_plans(plain, 2);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t r = 0; r < a[i].size(); ++r) {
      const Plan& plan = a[i][r];
      ASSERT_EQ(plan.pipeline_depth, 1);
      EXPECT_EQ(plan.weight_staleness(), 0);
      EXPECT_EQ(plan.weight_version(), plan.step);
      EXPECT_EQ(plan.op_labelled("pull features").stage, 0);
      EXPECT_EQ(plan.first_model_stage(), 1);
      EXPECT_EQ(plan.op_labelled("assemble input features").stage, 1)
          << "the pull stays in flight until the next round";
      for (const Op& op : plan.ops) {
        if (touches_parameters(op)) {
          EXPECT_EQ(op.stage, 1) << op.label;
        }
      }
      const int step = index_of_kind(plan, OpKind::optimizer_step);
      const std::size_t first_layer =
          static_cast<std::size_t>(index_of_kind(plan, OpKind::layer_forward));
      if (i == 0) {
        EXPECT_TRUE(plan.ops[first_layer].iteration_deps.empty());
      } else {
        EXPECT_EQ(plan.ops[first_layer].iteration_deps, (std::vector<IterationDep>{{1, step}}));
      }
      EXPECT_EQ(plan.bytes_sent(), b[i][r].bytes_sent());
      EXPECT_EQ(plan.ops.size(), b[i][r].ops.size());
    }
  }
}

TEST(PipelinedPlans, OtherStrategiesRefusePrefetching) {
  ExperimentConfig config = p3_experiment(false);
  config.distribution.prefetch = true;
  for (const std::string strategy : {"p3", "roc"}) {
    expect_refused(config, strategy, "distribution.prefetch");
  }
}

TEST(PipelinedPlans, ValidationRejectsDependenciesOutsideThePipeline) {
  const StrategyContext context = make_strategy_context(p3_experiment(true), cora(), kRanks);
  const auto iterations = epoch_plans(context, 1);
  Plan plan = iterations[5][0];
  plan.ops.back().iteration_deps.push_back({5, 0});
  EXPECT_THROW(plan.validate(), Error);
  plan = iterations[2][0];
  plan.ops.back().iteration_deps = {{3, 0}};  // before the epoch's first iteration
  EXPECT_THROW(plan.validate(), Error);
  plan = iterations[2][0];
  plan.ops.back().stage = 4;
  EXPECT_THROW(plan.validate(), Error);
}

}  // namespace
}  // namespace gnnbed
