// Per-op measurements of distributed training: an iteration's prologue and executed ops land in
// their kinds with their work; the per-epoch report over ranks is the exact mean and maximum; a
// table survives gathering; recorded plans carry each op's measured time.
#include <gtest/gtest.h>

#include "exec/distributed/op_timing.hpp"

namespace gnnbed {
namespace {

Op op_of(OpKind kind, double flops, double sparse_flops, std::int64_t memory_bytes) {
  Op op;
  op.kind = kind;
  op.flops = flops;
  op.sparse_flops = sparse_flops;
  op.memory_bytes = memory_bytes;
  return op;
}

// A plan of sample, announce (prologue), a layer and an exchange of 100 bytes to rank 1.
IterationRun iteration_run() {
  IterationRun run;
  Op sample = op_of(OpKind::sample, 0, 0, 0);
  sample.sampled_edges = 500;
  Op announce = op_of(OpKind::all_to_all, 0, 0, 0);
  announce.bytes_to = {0, 40};
  Op exchange = op_of(OpKind::all_to_all, 0, 0, 0);
  exchange.bytes_to = {0, 100};
  run.plan.ops = {sample, announce, op_of(OpKind::layer_forward, 1000, 200, 0), exchange};
  run.plan.prologue_ops = 2;
  run.sample_seconds = 0.5;
  run.sample_waiting = 0.0;
  run.announce_seconds = 0.25;
  run.announce_waiting = 0.125;
  run.outcome.records = {{2, 1.0, 2.0, 0.0}, {3, 3.0, 4.0, 1.5}};
  return run;
}

TEST(OpTiming, AnIterationAddsItsPrologueAndItsOpsWithTheirWork) {
  OpKindTable table;
  table.add_iteration(iteration_run());
  const OpKindTotals& sample = table.totals(OpKind::sample);
  EXPECT_EQ(sample.count, 1);
  EXPECT_EQ(sample.seconds, 0.5);
  EXPECT_EQ(sample.work.sampled_edges, 500);
  const OpKindTotals& layer = table.totals(OpKind::layer_forward);
  EXPECT_EQ(layer.count, 1);
  EXPECT_EQ(layer.seconds, 2.0);
  EXPECT_EQ(layer.work.dense_flops, 800);
  EXPECT_EQ(layer.work.sparse_flops, 200);
  const OpKindTotals& exchanges = table.totals(OpKind::all_to_all);
  EXPECT_EQ(exchanges.count, 2) << "the announcement and the exchange";
  EXPECT_EQ(exchanges.seconds, 4.25);
  EXPECT_EQ(exchanges.waiting_seconds, 1.625);
  EXPECT_EQ(exchanges.bytes_sent, 140);
  EXPECT_EQ(table.totals(OpKind::relu).count, 0);
}

TEST(OpTiming, ReportIsPerEpochMeanAndMaximumOverRanks) {
  OpKindTable rank0;
  OpKindTable rank1;
  const Op layer = op_of(OpKind::layer_forward, 100, 0, 0);
  // Two epochs: rank 0 spends 1 + 3 s, rank 1 2 + 6 s.
  rank0.add(layer, 1.0, 0.0);
  rank0.add(layer, 3.0, 0.0);
  rank1.add(layer, 2.0, 0.5);
  rank1.add(layer, 6.0, 0.5);
  const std::vector<OpKindTable> ranks = {rank0, rank1};
  const nlohmann::json report = op_kinds_json(ranks, 2);
  ASSERT_EQ(report.size(), 1u) << "kinds that ran only";
  const nlohmann::json& entry = report["layer_forward"];
  EXPECT_DOUBLE_EQ(entry["count_per_epoch"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(entry["seconds_per_epoch"]["mean"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(entry["seconds_per_epoch"]["max"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(entry["waiting_seconds_per_epoch"]["mean"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(entry["waiting_seconds_per_epoch"]["max"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(entry["work_per_epoch"]["dense_flops"].get<double>(), 100.0);
}

TEST(OpTiming, TableSurvivesGathering) {
  OpKindTable table;
  table.add_iteration(iteration_run());
  const OpKindTable back = OpKindTable::from_json(nlohmann::json::parse(table.to_json().dump()));
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    EXPECT_EQ(back.totals(kind).count, table.totals(kind).count);
    EXPECT_EQ(back.totals(kind).seconds, table.totals(kind).seconds);
    EXPECT_EQ(back.totals(kind).waiting_seconds, table.totals(kind).waiting_seconds);
    EXPECT_EQ(back.totals(kind).work.sparse_flops, table.totals(kind).work.sparse_flops);
    EXPECT_EQ(back.totals(kind).bytes_sent, table.totals(kind).bytes_sent);
  }
}

TEST(OpTiming, RecordedPlanCarriesEveryOpsMeasuredTime) {
  const Plan plan = plan_with_measured_seconds(iteration_run());
  ASSERT_EQ(plan.ops.size(), 4u);
  EXPECT_EQ(plan.ops[0].measured_seconds, 0.5);
  EXPECT_EQ(plan.ops[1].measured_seconds, 0.25);
  EXPECT_EQ(plan.ops[2].measured_seconds, 2.0);
  EXPECT_EQ(plan.ops[3].measured_seconds, 4.0);
}

TEST(OpTiming, PlanningIsChargedToTheSampleOpOrToTheDerivedGraphsOp) {
  IterationRun run = iteration_run();
  run.planning_seconds = 0.375;
  OpKindTable table;
  table.add_iteration(run);
  EXPECT_EQ(table.totals(OpKind::sample).seconds, 0.875) << "sampling and planning";
  EXPECT_EQ(table.totals(OpKind::sample).count, 1);
  EXPECT_EQ(table.totals(OpKind::all_to_all).seconds, 4.25) << "the exchanges alone";
  EXPECT_EQ(plan_with_measured_seconds(run).ops[0].measured_seconds, 0.875);

  // A third prologue op (P3's derived first-layer graphs) is built while planning: it takes it.
  run.plan.ops.insert(run.plan.ops.begin() + 2, op_of(OpKind::sample, 0, 0, 0));
  run.plan.prologue_ops = 3;
  run.outcome.records = {};
  const Plan plan = plan_with_measured_seconds(run);
  EXPECT_EQ(plan.ops[0].measured_seconds, 0.5);
  EXPECT_EQ(plan.ops[2].measured_seconds, 0.375);
}

}  // namespace
}  // namespace gnnbed
