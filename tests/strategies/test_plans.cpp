// Strategies' plans, checked on the plans alone: every plan is valid and round-trips through its
// file formats; traffic is conserved (what ranks send, ranks receive); P3 moves no feature bytes;
// DGL-pull moves exactly the remote input nodes' features; P3's partial activations and pushed
// layer-1 gradients are (N-1) x n1 x hidden x 4 bytes per batch owner; the gradient all-reduce
// moves the ring's 2 (N-1)/N of the data-parallel parameters; sampling over partitioned structure
// moves node ids and sampled lists, and none with replicated structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include "strategies/model_ops.hpp"
#include "strategies/p3.hpp"
#include "strategies/plan/block_codec.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/strategy.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

const Dataset& cora() { return testing::bundled_workload("cora"); }

StrategyContext context_for(int num_ranks, bool partitioned, const std::string& kind = "sage") {
  TrainingConfig training;
  training.batch_size = 16;
  training.fanouts = {10, 5};
  return StrategyContext{num_ranks,   ModelSpec(ModelConfig{kind, 2, 16, 0.5}, 1433, 7),
                         training,    NodePartition::hashed(2708, num_ranks, 3),
                         partitioned, 1433,
                         {},          {},
                         {}};
}

std::vector<Plan> plans_for(const std::string& strategy, const StrategyContext& context) {
  const BatchSchedule schedule(cora().split.train, context.partition, context.training.batch_size,
                               5);
  // The context's own strategy, with its options, where it has one; else the named defaults.
  const std::shared_ptr<const Strategy> chosen =
      context.strategy ? context.strategy : make_strategy(strategy);
  EXPECT_EQ(chosen->name(), strategy);
  return plan_iteration(*chosen, context, cora().graph, schedule, 9, 1, 0);
}

// The block a plan holds under `name` (Error when it holds none).
const Block& block_named(const Plan& plan, const std::string& name) {
  for (const TensorSpec& tensor : plan.tensors) {
    if (tensor.name == name && tensor.block) return *tensor.block;
  }
  throw Error("no block '" + name + "' in rank " + std::to_string(plan.rank) + "'s plan");
}

class PlanTest : public ::testing::TestWithParam<std::tuple<std::string, int, bool>> {};

TEST_P(PlanTest, PlansAreValidConserveTrafficAndRoundTrip) {
  const auto& [strategy, num_ranks, partitioned] = GetParam();
  const auto plans = plans_for(strategy, context_for(num_ranks, partitioned));
  ASSERT_EQ(static_cast<int>(plans.size()), num_ranks);
  TrafficBytes sent;
  TrafficBytes received;
  for (const Plan& plan : plans) {
    EXPECT_NO_THROW(plan.validate());
    EXPECT_EQ(plan.prologue_ops, 2) << "sample and announce";
    sent += plan.bytes_sent();
    received += plan.bytes_received();
    EXPECT_EQ(Plan::from_json(plan.to_json(), "test").to_json(), plan.to_json());
  }
  EXPECT_EQ(sent, received) << "every byte sent is received";
  if (num_ranks == 1) {
    EXPECT_EQ(sent.total(), 0);
  }
  for (const Plan& plan : plans) {
    const Op& sample = plan.ops.front();
    EXPECT_EQ(sample.sampling_hops.size(), partitioned ? 2u : 0u);
    EXPECT_EQ(sample.total_bytes_to() > 0, partitioned && num_ranks > 1) << "rank " << plan.rank;
  }

  const testing::TemporaryDirectory dir;
  for (const char* name : {"plans.json", "plans.msgpack"}) {
    write_plans(plans, dir.path() / name);
    const auto back = read_plans(dir.path() / name);
    ASSERT_EQ(back.size(), plans.size());
    for (std::size_t r = 0; r < plans.size(); ++r) EXPECT_EQ(back[r].to_json(), plans[r].to_json());
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, PlanTest,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values(1, 2, 3, 4), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<PlanTest::ParamType>& param_info) {
                           std::string name =
                               std::get<0>(param_info.param) + "_" +
                               std::to_string(std::get<1>(param_info.param)) +
                               (std::get<2>(param_info.param) ? "_partitioned" : "_replicated");
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(DglPullPlan, PullsExactlyTheRemoteInputNodesFeatures) {
  for (const int n : {2, 3, 4}) {
    const StrategyContext context = context_for(n, false);
    for (const Plan& plan : plans_for("dgl-pull", context)) {
      const Block& inputs_block =
          *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
      std::int64_t remote = 0;
      for (const NodeId v : inputs_block.src_nodes)
        remote += context.partition.owner(v) != plan.rank;
      EXPECT_EQ(plan.bytes_received()[Traffic::features], remote * 1433 * 4)
          << "rank " << plan.rank;
      EXPECT_EQ(plan.op_labelled("announce").total_bytes_to(), remote * 4)
          << "one id per pulled node";
      EXPECT_EQ(plan.bytes_sent()[Traffic::activations], 0);
    }
  }
}

// One rank holds every input row: it gathers them straight into the input in input order, and
// only ranks with peers assemble the input from local and pulled rows (scatter_rows).
TEST(DglPullPlan, OneRankGathersStraightIntoTheInputAndOnlyPeersAssembleIt) {
  for (const int n : {1, 2}) {
    for (const Plan& plan : plans_for("dgl-pull", context_for(n, false))) {
      const Block& inputs_block =
          *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
      const Op& gather = plan.op_labelled("gather local features");
      const TensorSpec& gathered = plan.tensors[static_cast<std::size_t>(gather.outputs[0])];
      const bool assembles = std::any_of(plan.ops.begin(), plan.ops.end(), [](const Op& op) {
        return op.kind == OpKind::scatter_rows;
      });
      EXPECT_EQ(assembles, n > 1);
      if (n == 1) {
        EXPECT_EQ(gathered.name, "input features");
        EXPECT_EQ(gathered.rows, static_cast<std::int64_t>(inputs_block.src_nodes.size()));
        EXPECT_EQ(plan.op_labelled("copy input features to device").inputs[0], gather.outputs[0]);
      } else {
        EXPECT_EQ(gathered.name, "local input features");
      }
    }
  }
}

// Planning work is counted on the sample op: dgl-pull looks up every input node's holder; p3's
// plans take the sampled ids as they are.
TEST(Planning, DglPullCountsEveryInputNodeAndP3None) {
  for (const int n : {1, 3}) {
    for (const Plan& plan : plans_for("dgl-pull", context_for(n, false))) {
      const Block& inputs_block =
          *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
      EXPECT_EQ(plan.planning_op(), 0u);
      EXPECT_EQ(plan.ops[0].planned_nodes,
                static_cast<std::int64_t>(inputs_block.src_nodes.size()));
      EXPECT_GT(plan.ops[0].planned_nodes, 0);
      for (std::size_t i = 1; i < plan.ops.size(); ++i) EXPECT_EQ(plan.ops[i].planned_nodes, 0);
    }
    for (const Plan& plan : plans_for("p3", context_for(n, false))) {
      for (const Op& op : plan.ops) EXPECT_EQ(op.planned_nodes, 0) << op.label;
    }
  }
}

TEST(P3Plan, MovesNoFeaturesAndTheDerivedActivationAndGradientBytes) {
  for (const int n : {2, 3, 4}) {
    const StrategyContext context = context_for(n, true);
    const auto plans = plans_for("p3", context);
    for (const Plan& plan : plans) {
      EXPECT_EQ(plan.bytes_sent()[Traffic::features], 0) << "P3 never moves features";
      EXPECT_EQ(plan.bytes_received()[Traffic::features], 0);
      const Block& first = *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
      const std::int64_t n1 = first.num_dst;
      EXPECT_EQ(plan.op_labelled("pull partial activations").total_bytes_from(),
                (n - 1) * n1 * 16 * 4)
          << "(N-1) x n1 x hidden x 4 partial activations per owner";
      EXPECT_EQ(plan.op_labelled("push layer0 gradients").total_bytes_to(), (n - 1) * n1 * 16 * 4);
      EXPECT_EQ(plan.op_labelled("announce").total_bytes_to(),
                (n - 1) * encoded_block_bytes(first));
      // Data-parallel parameters only: layer 0's bias and all of layer 1 (W_self, W_neigh, b).
      const std::int64_t data_parallel = 16 + 2 * 16 * 7 + 7;
      EXPECT_EQ(plan.op_labelled("all_reduce gradients").total_bytes_to(),
                4 * ring_all_reduce_elements_sent(plan.rank, n, data_parallel));
      // The first layer's weights are split by feature columns, 1433 rows over n ranks.
      for (const ParameterSpec& p : plan.parameters) {
        if (p.layer == 0 && p.is_weight) {
          const FeatureColumnSplit split(1433, n);
          EXPECT_EQ(p.row_begin, split.begin(plan.rank));
          EXPECT_EQ(p.row_end, split.end(plan.rank));
        }
      }
    }
  }
}

// With the structure replicated, P3 derives the first-layer graphs instead of pushing them: each
// owner announces only its seeds (4 bytes each to every peer), every rank samples the peers'
// batches again in a prologue op whose work is their sampled edges, and the graphs it gets are
// exactly the owners' (the plans are otherwise the push plans: same partial activations).
TEST(P3Plan, DerivingTheFirstLayerSendsOnlySeedsAndGivesTheOwnersGraphs) {
  for (const int n : {2, 4}) {
    StrategyContext pushing = context_for(n, false);
    StrategyContext deriving = pushing;
    deriving.strategy = make_p3_strategy(P3Options{0, true});
    const auto pushed = plans_for("p3", pushing);
    const auto derived = plans_for("p3", deriving);
    const BatchSchedule schedule(cora().split.train, deriving.partition, 16, 5);
    const NeighborSampler sampler(cora().graph, {10, 5}, 9);
    for (int r = 0; r < n; ++r) {
      const Plan& plan = derived[static_cast<std::size_t>(r)];
      const std::int64_t seeds = static_cast<std::int64_t>(schedule.seeds(r, 1, 0).size());
      EXPECT_EQ(plan.op_labelled("announce").total_bytes_to(), (n - 1) * seeds * 4);
      EXPECT_EQ(plan.bytes_sent()[Traffic::structure], (n - 1) * seeds * 4);
      EXPECT_EQ(plan.prologue_ops, 3);
      const Op& derive = plan.op_labelled("derive first-layer graphs");
      EXPECT_EQ(derive.kind, OpKind::sample);
      std::int64_t sampled_edges = 0;
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        const MiniBatch again = sampler.sample(schedule.seeds(q, 1, 0), schedule.batch_key(1, 0));
        for (const Block& block : again.blocks) sampled_edges += block.num_edges();
        const std::string name = "rank " + std::to_string(q) + " block0";
        const Block& mine = block_named(plan, name);
        EXPECT_EQ(mine.src_nodes, again.blocks.front().src_nodes) << name;
        EXPECT_EQ(mine.src_index, again.blocks.front().src_index) << name;
        const Block& theirs = block_named(pushed[static_cast<std::size_t>(r)], name);
        EXPECT_EQ(mine.offsets, theirs.offsets) << name;
      }
      EXPECT_EQ(derive.sampled_edges, sampled_edges);
      EXPECT_EQ(plan.op_labelled("pull partial activations").total_bytes_from(),
                pushed[static_cast<std::size_t>(r)]
                    .op_labelled("pull partial activations")
                    .total_bytes_from());
    }
  }
}

// GAT (8 heads of 16): besides the partial activations and their gradients, the owner pulls
// (N-1) x (n0 + n1) x heads x 4 bytes of partial scores and pushes as many summed, and the same
// again for the scores' gradients. Only W is split by feature columns; the attention vectors are
// all-reduced with the data-parallel parameters. The split layer ops' work adds up to the
// layer's.
TEST(P3Plan, GatSyncsTheAttentionScoresAndTheirGradients) {
  constexpr std::int64_t kHeads = 8;
  constexpr std::int64_t kWidth = kHeads * 16;
  for (const int n : {2, 3, 4}) {
    const StrategyContext context = context_for(n, true, "gat");
    for (const Plan& plan : plans_for("p3", context)) {
      const Block& first = *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
      const std::int64_t n1 = first.num_dst;
      const std::int64_t scores = (n - 1) * (first.num_src() + n1) * kHeads * 4;
      EXPECT_NO_THROW(plan.validate());
      EXPECT_EQ(Plan::from_json(plan.to_json(), "test").to_json(), plan.to_json());
      EXPECT_EQ(plan.bytes_sent()[Traffic::features], 0);
      EXPECT_EQ(plan.op_labelled("pull partial attention scores").total_bytes_from(), scores);
      EXPECT_EQ(plan.op_labelled("push attention scores").total_bytes_to(), scores);
      EXPECT_EQ(plan.op_labelled("pull partial score gradients").total_bytes_from(), scores);
      EXPECT_EQ(plan.op_labelled("push score gradients").total_bytes_to(), scores);
      EXPECT_EQ(plan.op_labelled("pull partial activations").total_bytes_from(),
                (n - 1) * n1 * kWidth * 4);
      EXPECT_EQ(plan.op_labelled("push layer0 gradients").total_bytes_to(),
                (n - 1) * n1 * kWidth * 4);
      // Layer 0's a_src, a_dst and b; layer 1's W, a_src, a_dst (one head of 7) and b.
      const std::int64_t data_parallel = 2 * kWidth + kWidth + kWidth * 7 + 2 * 7 + 7;
      EXPECT_EQ(plan.op_labelled("all_reduce gradients").total_bytes_to(),
                4 * ring_all_reduce_elements_sent(plan.rank, n, data_parallel));
      for (const ParameterSpec& p : plan.parameters) {
        const bool split = p.name == "layer0.W";
        EXPECT_EQ(p.local_rows(), split ? FeatureColumnSplit(1433, n).width(plan.rank) : p.rows)
            << p.name;
      }
      const ModelSpec& spec = context.model;
      const auto work = [&](bool forward, int sync_step) {
        double flops = 0;
        for (const Op& op : plan.ops) {
          if (op.partial && op.sync_step == sync_step &&
              op.kind == (forward ? OpKind::layer_forward : OpKind::layer_backward))
            flops += op.flops;
        }
        return flops;
      };
      EXPECT_EQ(work(true, 0) + work(false, 0), 0) << "every partial op is a step of the split";
      const int width = FeatureColumnSplit(1433, n).width(plan.rank);
      const auto whole_forward =
          spec.forward_work(0, first.num_dst, first.num_src(), first.num_edges(), width);
      const auto whole_backward =
          spec.backward_work(0, first.num_dst, first.num_src(), first.num_edges(), false, width);
      const auto split_forward =
          spec.split_forward_work(0, first.num_dst, first.num_src(), first.num_edges(), width);
      const auto split_backward = spec.split_backward_work(0, first.num_dst, first.num_src(),
                                                           first.num_edges(), false, width);
      EXPECT_DOUBLE_EQ(split_forward.to_sync.total_flops() + split_forward.from_sync.total_flops(),
                       whole_forward.total_flops());
      EXPECT_DOUBLE_EQ(
          split_backward.to_sync.total_flops() + split_backward.from_sync.total_flops(),
          whole_backward.total_flops());
      EXPECT_GT(work(true, 1), 0);
      EXPECT_GT(work(true, 2), 0);
      EXPECT_GT(work(false, 1), 0);
      EXPECT_GT(work(false, 2), 0);
    }
  }
}

// The first layer's forward dropout hashes only the features' groups holding a nonzero (Cora's
// bag of words: a few percent of them), and reads and writes every byte; every other dropout is
// dense.
TEST(DglPullPlan, DropoutWorkFollowsTheFeaturesDensity) {
  const double fraction = cora().features->nonzero_group_fraction();
  EXPECT_GT(fraction, 0.0);
  EXPECT_LT(fraction, 0.2);
  StrategyContext context = context_for(2, false);
  context.model.set_input_nonzero_group_fraction(fraction);
  int checked = 0;
  for (const Plan& plan : plans_for("dgl-pull", context)) {
    for (const Op& op : plan.ops) {
      if (op.kind != OpKind::dropout && op.kind != OpKind::dropout_backward) continue;
      const TensorSpec& tensor = plan.tensors[static_cast<std::size_t>(op.inputs[0])];
      const double entries = static_cast<double>(tensor.rows * tensor.cols);
      const double hashed = op.kind == OpKind::dropout && op.layer == 0 ? fraction : 1.0;
      EXPECT_DOUBLE_EQ(op.flops, hashed * entries) << op.label;
      EXPECT_EQ(op.memory_bytes, 2 * tensor.bytes()) << op.label;
      ++checked;
    }
  }
  EXPECT_GE(checked, 6);
  EXPECT_THROW(context.model.set_input_nonzero_group_fraction(1.5), ConfigError);
}

TEST(DglPullPlan, AllReducesEveryParameterOverTheRing) {
  const int n = 3;
  const std::int64_t all = 2 * 1433 * 16 + 16 + 2 * 16 * 7 + 7;
  for (const Plan& plan : plans_for("dgl-pull", context_for(n, false))) {
    const Op& reduce = plan.op_labelled("all_reduce gradients");
    EXPECT_EQ(reduce.total_bytes_to(), 4 * ring_all_reduce_elements_sent(plan.rank, n, all));
    EXPECT_EQ(reduce.bytes_to[static_cast<std::size_t>(ring_peers(plan.rank, n).next)],
              reduce.total_bytes_to());
  }
}

// An op's inputs are named by its kind's signature: builders and engines read them by name, and
// validation names the input whose tensor is of the wrong kind, or the count that does not fit.
TEST(PlanOps, InputsAreNamedAndValidationChecksWhatEachNameHolds) {
  Plan plan = plans_for("dgl-pull", context_for(2, false))[0];
  const std::size_t forward =
      static_cast<std::size_t>(&plan.op_labelled("layer0.forward") - plan.ops.data());
  const Op& op = plan.ops[forward];
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(op.input(Input::block))].kind, TensorKind::block);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(op.input(Input::tensor))].kind,
            TensorKind::dense);
  EXPECT_FALSE(op.has_input(Input::seeds));
  EXPECT_THROW(static_cast<void>(op.input(Input::seeds)), Error);

  Plan swapped = plan;
  std::swap(swapped.ops[forward].inputs[0], swapped.ops[forward].inputs[1]);
  try {
    swapped.validate();
    ADD_FAILURE() << "a layer_forward reading a dense tensor as its block was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("its block input"), std::string::npos) << error.what();
  }
  Plan short_of_one = plan;
  ASSERT_GT(short_of_one.ops[forward].inputs.size(), 1U);
  short_of_one.ops[forward].inputs.pop_back();
  try {
    short_of_one.validate();
    ADD_FAILURE() << "a layer_forward without its input was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("takes 2"), std::string::npos) << error.what();
  }
}

// A plan file's integers must be integers in range: nlohmann would cast 1e300 (undefined
// behaviour) and wrap 2^32 + 1.
TEST(PlanFiles, NumbersBeyondAFieldsTypeAreNamed) {
  const auto plans = plans_for("p3", context_for(2, false));
  const testing::TemporaryDirectory dir;
  const auto path = dir.path() / "plans.json";
  const nlohmann::json good = nlohmann::json::parse(encode_plans(plans, path));
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"rank", [](nlohmann::json& doc) { doc[0]["rank"] = 1e300; }},
      {"deps", [](nlohmann::json& doc) { doc[0]["ops"][1]["deps"] = {4294967297LL}; }},
      {"bytes_to", [](nlohmann::json& doc) { doc[0]["ops"][1]["bytes_to"][0] = -1e19; }}};
  for (const auto& [field, damage] : cases) {
    nlohmann::json bad = good;
    damage(bad);
    std::ofstream(path) << bad.dump();
    try {
      read_plans(path);
      ADD_FAILURE() << field << " accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), field) << error.what();
    }
  }
}

TEST(SamplingTraffic, RequestsAndRepliesFollowTheSampledBlocks) {
  const StrategyContext context = context_for(3, true);
  const BatchSchedule schedule(cora().split.train, context.partition, 16, 5);
  const NeighborSampler sampler(cora().graph, {10, 5}, 9);
  std::vector<MiniBatch> batches;
  for (int r = 0; r < 3; ++r) batches.push_back(sampler.sample(schedule.seeds(r, 1, 0), 7));
  const auto traffic = sampling_traffic(batches, context.partition);
  for (int r = 0; r < 3; ++r) {
    // Hop 0 samples the seeds: requests for the seeds this rank does not own... which is none,
    // since every rank trains on its own nodes.
    for (const std::int64_t bytes : traffic[static_cast<std::size_t>(r)][0].request_bytes_to)
      EXPECT_EQ(bytes, 0);
    // Hop 1 samples the layer-1 nodes: one id per remote node, a count and the ids back.
    const Block& hop1 = batches[static_cast<std::size_t>(r)].blocks[0];
    std::int64_t requests = 0;
    std::int64_t replies = 0;
    for (std::int64_t d = 0; d < hop1.num_dst; ++d) {
      if (context.partition.owner(hop1.src_nodes[static_cast<std::size_t>(d)]) == r) continue;
      requests += 4;
      replies += 4 + 4 * (hop1.offsets[static_cast<std::size_t>(d) + 1] -
                          hop1.offsets[static_cast<std::size_t>(d)]);
    }
    std::int64_t request_total = 0;
    std::int64_t reply_total = 0;
    for (int q = 0; q < 3; ++q) {
      request_total +=
          traffic[static_cast<std::size_t>(r)][1].request_bytes_to[static_cast<std::size_t>(q)];
      reply_total +=
          traffic[static_cast<std::size_t>(r)][1].reply_bytes_from[static_cast<std::size_t>(q)];
    }
    EXPECT_EQ(request_total, requests);
    EXPECT_EQ(reply_total, replies);
  }
}

// With more ranks than feature columns (3 over 5 ranks), ranks 3 and 4 hold no column: they take
// no share of the first layer, receive no computation graph, and pull their batch's partial
// activations from the 3 ranks that hold columns.
TEST(P3Plan, RanksWithoutFeatureColumnsComputeNoPartialActivations) {
  const int n = 5;
  const int columns = 3;
  StrategyContext context = context_for(n, true);
  context.model = ModelSpec(ModelConfig{"sage", 2, 16, 0.5}, columns, 7);
  context.feature_dim = columns;
  const auto plans = plans_for("p3", context);
  TrafficBytes sent;
  TrafficBytes received;
  for (const Plan& plan : plans) {
    EXPECT_NO_THROW(plan.validate());
    sent += plan.bytes_sent();
    received += plan.bytes_received();
    const bool holds_a_column = plan.rank < columns;
    int partial_layers = 0;
    for (const Op& op : plan.ops) partial_layers += op.kind == OpKind::layer_forward && op.partial;
    EXPECT_EQ(partial_layers, holds_a_column ? n : 0) << "rank " << plan.rank;

    const Block& first = *plan.tensors[static_cast<std::size_t>(plan.ops[0].outputs[0])].block;
    const std::int64_t other_holders = holds_a_column ? columns - 1 : columns;
    EXPECT_EQ(plan.op_labelled("announce").total_bytes_to(),
              other_holders * encoded_block_bytes(first));
    EXPECT_EQ(plan.op_labelled("pull partial activations").total_bytes_from(),
              other_holders * first.num_dst * 16 * 4);
    EXPECT_EQ(plan.op_labelled("push layer0 gradients").total_bytes_to(),
              other_holders * first.num_dst * 16 * 4);
    for (const ParameterSpec& p : plan.parameters) {
      if (p.layer == 0 && p.is_weight) {
        EXPECT_EQ(p.row_end - p.row_begin, holds_a_column ? 1 : 0) << "rank " << plan.rank;
      }
    }
  }
  EXPECT_EQ(sent, received);
}

TEST(StrategyChecks, RejectWhatTheyCannotRun) {
  StrategyContext context = context_for(2, false);
  context.feature_dim = 0;
  try {
    make_strategy("p3")->check(context);
    FAIL() << "p3 needs feature columns to split";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.features");
  }
  EXPECT_THROW(make_strategy("pytorch-biggraph"), ConfigError);
  EXPECT_EQ(strategy_names(),
            (std::vector<std::string>{"dgl-pull", "neutronstar", "p3", "roc", "sancus"}));
}

TEST(BlockCodec, RoundTripsAndRejectsMalformedStreams) {
  const NeighborSampler sampler(cora().graph, {10, 5}, 1);
  const std::vector<NodeId> seeds = {0, 5, 17};
  const Block block = sampler.sample(seeds, 3).blocks[0];
  const std::vector<std::int32_t> stream = encode_block(block);
  EXPECT_EQ(static_cast<std::int64_t>(stream.size() * 4), encoded_block_bytes(block));
  const Block back = decode_block(stream, "test");
  EXPECT_EQ(back.src_nodes, block.src_nodes);
  EXPECT_EQ(back.offsets, block.offsets);
  EXPECT_EQ(back.src_index, block.src_index);
  std::vector<std::int32_t> truncated(stream.begin(), stream.end() - 1);
  EXPECT_THROW(decode_block(truncated, "test"), Error);
  std::vector<std::int32_t> bad_edge = stream;
  bad_edge.back() = 1 << 30;
  EXPECT_THROW(decode_block(bad_edge, "test"), Error);
}

TEST(BatchSchedule, EveryTrainingNodeOncePerEpochOnItsOwner) {
  const NodePartition partition = NodePartition::hashed(2708, 3, 3);
  const BatchSchedule schedule(cora().split.train, partition, 16, 5);
  std::vector<NodeId> seen;
  for (int i = 0; i < schedule.iterations_per_epoch(); ++i) {
    std::int64_t count = 0;
    for (int r = 0; r < 3; ++r) {
      for (const NodeId v : schedule.seeds(r, 2, i)) {
        EXPECT_EQ(partition.owner(v), r);
        seen.push_back(v);
        ++count;
      }
    }
    EXPECT_EQ(count, schedule.seeds_in_iteration(2, i));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, cora().split.train);
  EXPECT_NE(schedule.seeds(0, 1, 0), schedule.seeds(0, 2, 0)) << "a new order every epoch";
}

}  // namespace
}  // namespace gnnbed

namespace gnnbed {
namespace {

TEST(GatherRowsOp, ReadsItsRowsFromTheColumnsOfItsSourceItTakes) {
  PlanBuilder builder("test", 0, 1, 0, 0);
  const int source = builder.add_dense("table", 1000, 32);
  const int positions = builder.add_index("positions", std::vector<std::int32_t>(10, 3));
  const int whole = builder.add_dense("whole", 10, 32);
  const Op all = gather_rows_op(builder, "gather all", positions, source, whole, 0, 0);
  EXPECT_EQ(all.gathered_rows, 10);
  EXPECT_EQ(all.gathered_table_bytes, 1000 * 32 * 4);
  const int slice = builder.add_dense("slice", 10, 8);
  const Op some = gather_rows_op(builder, "gather some", positions, source, slice, 8, 16);
  EXPECT_EQ(some.gathered_table_bytes, 1000 * 8 * 4) << "the columns it reads of every row";
}

}  // namespace
}  // namespace gnnbed
