// Plans on sparse input features (Cora's bag of words, kept sparse by the loader): dgl-pull and
// ROC gather and send the feature rows as sparse rows, whose bytes are exactly their rows' lengths
// and their entries; the first layer and its dropout cost the entries; GAT, and features loaded
// dense, keep dense rows; the plan file keeps a sparse tensor's kind and entries.
#include <gtest/gtest.h>

#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

constexpr int kRanks = 3;

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig experiment(const std::string& strategy, const std::string& model) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, 2, 16, 0.5};
  config.training.batch_size = strategy == "roc" ? 0 : 16;
  config.training.fanouts = {10, 5};
  config.distribution.strategy = strategy;
  return config;
}

std::vector<Plan> plans(const ExperimentConfig& config, const Dataset& dataset = cora()) {
  const StrategyContext context = make_strategy_context(config, dataset, kRanks);
  const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                               5);
  return plan_iteration(*context.strategy, context, dataset.graph, schedule, 9, 1, 0);
}

// Cora's stored entries of `nodes`' rows, counted from the loaded features.
std::int64_t entries_of(std::span<const std::int32_t> nodes) {
  const auto& sparse = dynamic_cast<const SparseFeatures&>(*cora().features);
  std::int64_t entries = 0;
  for (const std::int32_t v : nodes) {
    entries += sparse.offsets()[static_cast<std::size_t>(v) + 1] -
               sparse.offsets()[static_cast<std::size_t>(v)];
  }
  return entries;
}

const Op& feature_exchange(const Plan& plan) {
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::all_to_all && op.traffic == Traffic::features) return op;
  }
  throw Error("no feature exchange in the plan");
}

std::int64_t sparse_bytes(std::int64_t rows, std::int64_t entries) {
  return 4 * rows + 8 * entries;
}

// Every sent tensor's gather reads the ids the peer asked for: its entries are theirs, its bytes
// those of the rows' lengths and entries, and what a peer receives is what was sent to it.
void expect_sparse_pulls(const std::vector<Plan>& all) {
  ASSERT_TRUE(dynamic_cast<const SparseFeatures*>(cora().features.get())) << "Cora loads sparse";
  for (int r = 0; r < kRanks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const Plan& plan = all[static_cast<std::size_t>(r)];
    const Op& pull = feature_exchange(plan);
    for (int q = 0; q < kRanks; ++q) {
      if (q == r) continue;
      const auto slot = static_cast<std::size_t>(q);
      const TensorSpec& sent = plan.tensors[static_cast<std::size_t>(pull.inputs[slot])];
      ASSERT_EQ(sent.kind, TensorKind::sparse);
      const Op* gather = nullptr;
      for (const Op& op : plan.ops) {
        if (op.kind == OpKind::gather_features && op.outputs[0] == pull.inputs[slot]) gather = &op;
      }
      ASSERT_NE(gather, nullptr);
      const TensorSpec& ids = plan.tensors[static_cast<std::size_t>(gather->input(Input::ids))];
      EXPECT_EQ(sent.entries, entries_of(*ids.index));
      EXPECT_EQ(pull.bytes_to[slot], sparse_bytes(sent.rows, sent.entries));
      const Op& peer = feature_exchange(all[slot]);
      EXPECT_EQ(peer.bytes_from[static_cast<std::size_t>(r)], pull.bytes_to[slot]);
      EXPECT_LT(pull.bytes_to[slot] * 20, sent.rows * 1433 * 4 + 1) << "Cora is 1.3 % non-zero";
    }
  }
}

TEST(SparseFeaturePlans, DglPullSendsTheEntriesOfTheRowsItPulls) {
  expect_sparse_pulls(plans(experiment("dgl-pull", "sage")));
}

TEST(SparseFeaturePlans, RocPullsItsHaloAsSparseRows) {
  expect_sparse_pulls(plans(experiment("roc", "gcn")));
}

// The first layer on sparse rows: each product goes through the entries (GraphSAGE: the source
// rows' and the destinations' own, taken as their share of the rows), then the aggregation at
// the output width, all sparse FLOPs; the entries built are the aggregation's. Dropout decides
// each entry with a hash of its own: as many FLOPs as a dense group of kDropoutGroupEntries.
TEST(SparseFeaturePlans, TheFirstLayerAndItsDropoutCostTheirEntries) {
  for (const Plan& plan : plans(experiment("dgl-pull", "sage"))) {
    for (const Op& op : plan.ops) {
      if (op.layer != 0 || (op.kind != OpKind::layer_forward && op.kind != OpKind::dropout))
        continue;
      const TensorSpec& in = plan.tensors[static_cast<std::size_t>(op.input(Input::tensor))];
      ASSERT_EQ(in.kind, TensorKind::sparse);
      if (op.kind == OpKind::dropout) {
        EXPECT_EQ(op.flops, static_cast<double>(kDropoutGroupEntries * in.entries));
        continue;
      }
      const Block& block = *plan.tensors[static_cast<std::size_t>(op.input(Input::block))].block;
      const std::int64_t dst_entries = in.entries * block.num_dst / in.rows;
      const double products = static_cast<double>(in.entries + dst_entries);
      const auto edges = static_cast<double>(block.num_edges());
      EXPECT_EQ(op.sparse_entries, block.num_edges()) << "GraphSAGE's aggregation: no self loops";
      EXPECT_DOUBLE_EQ(op.sparse_flops, 2.0 * (products + edges) * 16);
      EXPECT_DOUBLE_EQ(op.flops, op.sparse_flops);
    }
  }
}

TEST(SparseFeaturePlans, GatAndDenseRowsKeepDenseTensors) {
  const std::vector<Plan> gat = plans(experiment("dgl-pull", "gat"));
  const std::vector<Plan> dense =
      plans(experiment("dgl-pull", "sage"), testing::bundled_workload("cora", "dense"));
  for (const auto* all : {&gat, &dense}) {
    for (const Plan& plan : *all) {
      for (const TensorSpec& tensor : plan.tensors) EXPECT_NE(tensor.kind, TensorKind::sparse);
      const Op& pull = feature_exchange(plan);
      for (std::size_t q = 0; q < pull.outputs.size(); ++q) {
        if (pull.outputs[q] < 0) continue;
        EXPECT_EQ(pull.bytes_from[q],
                  plan.tensors[static_cast<std::size_t>(pull.outputs[q])].rows * 1433 * 4);
      }
    }
  }
}

TEST(SparseFeaturePlans, PlanFilesKeepSparseTensorsAndValidationChecksThem) {
  const Plan plan = plans(experiment("dgl-pull", "gcn")).front();
  const Plan read = Plan::from_json(plan.to_json(), "test");
  ASSERT_EQ(read.tensors.size(), plan.tensors.size());
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    EXPECT_EQ(read.tensors[t].kind, plan.tensors[t].kind);
    EXPECT_EQ(read.tensors[t].entries, plan.tensors[t].entries);
    EXPECT_EQ(read.tensors[t].bytes(), plan.tensors[t].bytes());
  }
  Plan too_many = plan;
  for (TensorSpec& tensor : too_many.tensors) {
    if (tensor.kind == TensorKind::sparse) tensor.entries = tensor.rows * tensor.cols + 1;
  }
  EXPECT_THROW(too_many.validate(), Error);
  Plan mixed = plan;
  for (Op& op : mixed.ops) {
    if (op.kind == OpKind::scatter_rows) {
      mixed.tensors[static_cast<std::size_t>(op.outputs[0])].kind = TensorKind::dense;
    }
  }
  EXPECT_THROW(mixed.validate(), Error);
}

}  // namespace
}  // namespace gnnbed
