// Experiment descriptions: model shapes and FLOP counts, training validation, and resolving a
// config from defaults, a JSON file and command-line assignments.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "strategies/config/experiment_config.hpp"
#include "tests/support/refused_field.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

TEST(ModelSpec, ResolvesLayerWidthsAndParameters) {
  const ModelSpec gcn(ModelConfig{"gcn", 3, 16, 0.5}, 100, 47);
  ASSERT_EQ(gcn.num_layers(), 3);
  EXPECT_EQ(gcn.layer(0).in_dim, 100);
  EXPECT_EQ(gcn.layer(0).out_dim, 16);
  EXPECT_TRUE(gcn.layer(1).relu);
  EXPECT_EQ(gcn.layer(2).out_dim, 47);
  EXPECT_FALSE(gcn.layer(2).relu);
  EXPECT_EQ(gcn.num_parameters(), (100 * 16 + 16) + (16 * 16 + 16) + (16 * 47 + 47));
  const ModelSpec sage(ModelConfig{"sage", 2, 32, 0.0}, 10, 3);
  const auto parameters = sage.parameters(0);
  ASSERT_EQ(parameters.size(), 3u);
  EXPECT_EQ(parameters[0].name, "W_self");
  EXPECT_EQ(parameters[1].name, "W_neigh");
  EXPECT_TRUE(parameters[1].is_weight);
  EXPECT_FALSE(parameters[2].is_weight);
  EXPECT_EQ(sage.num_parameters(), 2 * 10 * 32 + 32 + 2 * 32 * 3 + 3);
}

TEST(ModelSpec, WorkFollowsTheKernelsOrder) {
  const ModelSpec sage(ModelConfig{"sage", 2, 16, 0.5}, 100, 47);
  // Layer 0 narrows 100 -> 16: transform every source row, aggregate at width 16.
  const auto f0 = sage.forward_work(0, 10, 40, 200);
  EXPECT_EQ(f0.dense_flops, 2.0 * 10 * 100 * 16 + 2.0 * 40 * 100 * 16);
  EXPECT_EQ(f0.sparse_flops, 2.0 * 200 * 16);
  EXPECT_EQ(f0.sparse_entries, 200.0) << "an entry per edge, whatever the width";
  // The 10 destination and 40 source rows read at width 100 and written at width 16.
  EXPECT_EQ(f0.memory_bytes, 4.0 * (10 + 40) * (100 + 16));
  const auto b0 = sage.backward_work(0, 10, 40, 200, false);
  EXPECT_EQ(b0.dense_flops, f0.dense_flops);
  EXPECT_EQ(b0.sparse_flops, f0.sparse_flops);
  EXPECT_EQ(b0.sparse_entries, f0.sparse_entries) << "the transposed aggregation";
  EXPECT_EQ(b0.memory_bytes, f0.memory_bytes);
  // Layer 1 widens 16 -> 47: aggregate first at width 16, transform the destinations.
  const auto f1 = sage.forward_work(1, 5, 10, 30);
  EXPECT_EQ(f1.dense_flops, 2.0 * 5 * 16 * 47 * 2);
  EXPECT_EQ(f1.sparse_flops, 2.0 * 30 * 16);
  EXPECT_EQ(f1.memory_bytes, 4.0 * (5 + 5) * (16 + 47));
  EXPECT_EQ(sage.backward_work(1, 5, 10, 30, false).sparse_flops, 0.0);
  EXPECT_EQ(sage.backward_work(1, 5, 10, 30, false).sparse_entries, 0.0);
  const auto b1 = sage.backward_work(1, 5, 10, 30, true);
  EXPECT_EQ(b1.dense_flops, 2 * f1.dense_flops);
  EXPECT_EQ(b1.memory_bytes, 2 * f1.memory_bytes);
  const ModelSpec gcn(ModelConfig{"gcn", 2, 16, 0.5}, 100, 47);
  const auto g0 = gcn.forward_work(0, 10, 40, 200);
  EXPECT_EQ(g0.sparse_flops, 2.0 * (200 + 10) * 16);
  EXPECT_EQ(g0.sparse_entries, 200.0 + 10) << "and one per self loop";
  EXPECT_EQ(g0.memory_bytes, 4.0 * 40 * (100 + 16));

  // SGC: the first layer maps 100 -> 47 like GCN's; the second only propagates, at width 47.
  const ModelSpec sgc(ModelConfig{"sgc", 2, 16, 0.5}, 100, 47);
  const auto s0 = sgc.forward_work(0, 10, 40, 200);
  EXPECT_EQ(s0.dense_flops, 2.0 * 40 * 100 * 47);
  EXPECT_EQ(s0.sparse_flops, 2.0 * (200 + 10) * 47);
  const auto s1 = sgc.forward_work(1, 5, 10, 30);
  EXPECT_EQ(s1.dense_flops, 0.0);
  EXPECT_EQ(s1.memory_bytes, 0.0);
  EXPECT_EQ(s1.sparse_flops, 2.0 * (30 + 5) * 47);
  EXPECT_EQ(sgc.backward_work(1, 5, 10, 30, true).sparse_flops, s1.sparse_flops);
  EXPECT_EQ(sgc.backward_work(1, 5, 10, 30, false).sparse_flops, 0.0);

  // GAT, 4 heads of 8: transform every source row to 32 columns, then per edge and self loop
  // aggregate 32 columns and attend 4 heads (5 FLOPs each), plus both sides' scores.
  ModelConfig gat_config{"gat", 2, 8, 0.5};
  gat_config.heads = 4;
  const ModelSpec gat(gat_config, 100, 47);
  const auto a0 = gat.forward_work(0, 10, 40, 200);
  EXPECT_EQ(a0.dense_flops, 2.0 * 40 * 100 * 32);
  EXPECT_EQ(a0.sparse_flops, 2.0 * 210 * 32 + 2.0 * (40 + 10) * 32 + 5.0 * 210 * 4);
  EXPECT_EQ(gat.backward_work(0, 10, 40, 200, false).sparse_flops, 2 * a0.sparse_flops);
}

TEST(ModelSpec, AnAggregationReadsARowOfItsSourceTablePerEntry) {
  const ModelSpec gcn(ModelConfig{"gcn", 2, 16, 0.5}, 100, 47);
  // Layer 0 aggregates at width 16 over 200 edges and 10 self loops, from 40 source rows.
  const auto f0 = gcn.forward_work(0, 10, 40, 200);
  EXPECT_EQ(f0.gathered_rows, 210.0);
  EXPECT_EQ(f0.gathered_table_bytes, 4.0 * 40 * 16);
  const auto b0 = gcn.backward_work(0, 10, 40, 200, false);
  EXPECT_EQ(b0.gathered_rows, f0.gathered_rows) << "the transposed aggregation adds into as many";
  EXPECT_EQ(b0.gathered_table_bytes, f0.gathered_table_bytes);
  // Layer 1 aggregates first: without an input gradient its backward aggregates nothing.
  const auto b1 = gcn.backward_work(1, 5, 10, 30, false);
  EXPECT_EQ(b1.gathered_rows, 0.0);
  EXPECT_EQ(b1.gathered_table_bytes, 0.0);
  // Sparse input rows: the aggregation runs at the output width after the products.
  const auto s0 = gcn.sparse_input_work(10, 40, 200, 500, 100, false);
  EXPECT_EQ(s0.gathered_rows, 210.0);
  EXPECT_EQ(s0.gathered_table_bytes, 4.0 * 40 * 16);
  // GAT split at its sums over ranks: the aggregation's step carries the rows.
  ModelConfig gat_config{"gat", 2, 8, 0.5};
  gat_config.heads = 4;
  const ModelSpec gat(gat_config, 100, 47);
  const auto split = gat.split_forward_work(0, 10, 40, 200);
  EXPECT_EQ(split.to_sync.gathered_rows, 0.0);
  EXPECT_EQ(split.from_sync.gathered_rows, 210.0);
  EXPECT_EQ(split.from_sync.gathered_table_bytes, 4.0 * 40 * 32);
}

TEST(ModelSpec, SgcAndGatShapesAndParameters) {
  const ModelSpec sgc(ModelConfig{"sgc", 3, 64, 0.0}, 100, 47);
  EXPECT_EQ(sgc.layer(0).out_dim, 47) << "the hidden size does not apply";
  EXPECT_EQ(sgc.layer(1).in_dim, 47);
  EXPECT_FALSE(sgc.layer(0).relu);
  EXPECT_FALSE(sgc.layer(1).bias);
  EXPECT_TRUE(sgc.layer(2).bias);
  EXPECT_EQ(sgc.num_parameters(), 100 * 47 + 47);
  EXPECT_EQ(sgc.num_weights(1), 0);

  ModelConfig gat_config{"gat", 2, 8, 0.6};
  gat_config.heads = 4;
  const ModelSpec gat(gat_config, 100, 7);
  EXPECT_EQ(gat.layer(0).out_dim, 32);
  EXPECT_EQ(gat.layer(0).heads, 4);
  EXPECT_EQ(gat.layer(1).in_dim, 32);
  EXPECT_EQ(gat.layer(1).out_dim, 7);
  EXPECT_EQ(gat.layer(1).heads, 1) << "one output head";
  const auto p0 = gat.parameters(0);
  ASSERT_EQ(p0.size(), 4u);
  EXPECT_EQ(p0[1].name, "a_src");
  EXPECT_EQ(p0[1].rows, 4);
  EXPECT_EQ(p0[1].cols, 8);
  EXPECT_EQ(gat.num_parameters(), 100 * 32 + 2 * 32 + 32 + 32 * 7 + 2 * 7 + 7);
  EXPECT_TRUE(gat.transforms_first(1)) << "attention needs the transformed rows";
}

TEST(ModelSpec, RejectsUnusableConfigurations) {
  EXPECT_THROW(ModelSpec(ModelConfig{"gin", 2, 16, 0.5}, 10, 3), ConfigError);
  EXPECT_THROW(ModelSpec(ModelConfig{"gat", 2, 16, 0.5, 0}, 10, 3), ConfigError);
  EXPECT_THROW(ModelSpec(ModelConfig{"gcn", 0, 16, 0.5}, 10, 3), ConfigError);
  EXPECT_THROW(ModelSpec(ModelConfig{"gcn", 2, 16, 1.0}, 10, 3), ConfigError);
  EXPECT_THROW(ModelSpec(ModelConfig{"gcn", 2, 16, 0.5}, 0, 3), ConfigError);
}

TEST(TrainingConfig, DivergenceStopsTrainingUnlessToldToGoOn) {
  TrainingConfig config;
  EXPECT_NO_THROW(check_divergence(config, 3, 1.25));
  for (const double loss : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    try {
      check_divergence(config, 7, loss);
      ADD_FAILURE() << "no error for loss " << loss;
    } catch (const DivergenceError& error) {
      EXPECT_NE(std::string(error.what()).find("loss of epoch 7"), std::string::npos)
          << error.what();
    }
  }
  const nlohmann::json off = {{"stop_on_divergence", false}};
  config = training_config_from_json(off, TrainingConfig{}, "training");
  EXPECT_FALSE(config.stop_on_divergence);
  EXPECT_NO_THROW(check_divergence(config, 7, std::nan("")));
  EXPECT_EQ(to_json(config)["stop_on_divergence"], false);
}

TEST(TrainingConfig, ValidationNamesTheField) {
  auto field_of = [](TrainingConfig config) {
    try {
      validate(config, 2);
    } catch (const ConfigError& error) {
      return error.field();
    }
    return std::string("(valid)");
  };
  TrainingConfig good;
  EXPECT_EQ(field_of(good), "(valid)");
  TrainingConfig bad = good;
  bad.optimizer = "lbfgs";
  EXPECT_EQ(field_of(bad), "training.optimizer");
  bad = good;
  bad.batch_size = 64;
  bad.fanouts = {10};
  EXPECT_EQ(field_of(bad), "training.fanouts");
  bad.fanouts = {10, 0};
  EXPECT_EQ(field_of(bad), "training.fanouts");
  bad.fanouts = {10, -1};
  EXPECT_EQ(field_of(bad), "(valid)");
  bad = good;
  bad.learning_rate = 0;
  EXPECT_EQ(field_of(bad), "training.learning_rate");
}

TEST(ResolveExperiment, UnknownStrategiesAndPartitionersAreRefusedWhenRead) {
  // Every tool reads its experiment here, train too: none records a name that does not exist.
  using testing::refused_field;
  EXPECT_EQ(refused_field("distribution.strategy=foo"), "distribution.strategy");
  EXPECT_EQ(refused_field("distribution.partitioner=foo"), "distribution.partitioner");
  EXPECT_EQ(refused_field("distribution.strategy=p3"), "(accepted)");
  EXPECT_EQ(refused_field("distribution.partitioner=metis"), "(accepted)");
  EXPECT_EQ(refused_field("distribution.partitioner=cost-balanced"), "(accepted)");
}

TEST(ResolveExperiment, DefaultsThenFileThenAssignments) {
  const TemporaryDirectory dir;
  const auto file = dir.write("e.json", R"({"model": {"hidden": 64, "kind": "sage"},
                                            "training": {"fanouts": [15, 5]}})");
  const ExperimentConfig config = resolve_experiment(
      file, {"model.hidden=128", "training.fanouts=7,3", "workload.source=citeseer"},
      {"model.hidden=8", "model.num_layers=3", "training.epochs=9"});
  EXPECT_EQ(config.model.hidden, 128);    // assignment beats file beats default
  EXPECT_EQ(config.model.kind, "sage");   // file
  EXPECT_EQ(config.model.num_layers, 3);  // program default
  EXPECT_EQ(config.training.epochs, 9);   // program default
  EXPECT_EQ(config.training.fanouts, (std::vector<int>{7, 3}));
  EXPECT_EQ(config.workload.source, "citeseer");
  const ExperimentConfig round_trip = experiment_config_from_json(to_json(config));
  EXPECT_EQ(to_json(round_trip), to_json(config));
}

TEST(ResolveExperiment, ErrorsNameTheFileLineOrField) {
  const TemporaryDirectory dir;
  const auto broken = dir.write("broken.json", "{\n  \"model\": {\"hidden\": }\n}\n");
  try {
    resolve_experiment(broken, {});
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), broken.string());
    EXPECT_EQ(error.line(), 2);
  }
  EXPECT_THROW(resolve_experiment(dir.path() / "missing.json", {}), InputError);
  const auto list = dir.write("list.json", "[1, 2]");
  EXPECT_THROW(resolve_experiment(list, {}), InputError);
  try {
    resolve_experiment("", {"training.epochs"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("FIELD=VALUE"), std::string::npos);
  }
  try {
    resolve_experiment("", {"training.fanouts=25,,10"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "training.fanouts");
  }
  try {
    resolve_experiment("", {"modle.hidden=3"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "modle");
  }
  // P3 derives first-layer graphs only from a whole copy of the structure.
  for (const auto& assignments : std::vector<std::vector<std::string>>{
           {"distribution.p3_first_layer=derive", "distribution.structure=partitioned"},
           {"distribution.p3_first_layer=pull"}}) {
    try {
      resolve_experiment("", assignments);
      FAIL() << "expected ConfigError";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "distribution.p3_first_layer");
    }
  }
  EXPECT_EQ(
      resolve_experiment("", {"distribution.p3_first_layer=derive"}).distribution.p3_first_layer,
      "derive");
}

// Numbers a field's type cannot hold are named, not cast: casting 1e25 to an integer or 1e300 to
// a float is undefined behaviour (found by fuzzing), and 2^32 + 64 would wrap to 64.
TEST(ResolveExperiment, NumbersBeyondTheFieldsTypeAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.hidden=1e25", "model.hidden"},
      {"model.hidden=4294967360", "model.hidden"},
      {"training.fanouts=[4294967306, 5]", "training.fanouts"},
      {"workload.feature_signal=1e300", "workload.feature_signal"},
      {"training.epochs=-1e300", "training.epochs"}};
  for (const auto& [assignment, field] : cases) {
    try {
      resolve_experiment("", {assignment});
      ADD_FAILURE() << assignment << " accepted";
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), field) << error.what();
    }
  }
  EXPECT_EQ(resolve_experiment("", {"model.hidden=64.0"}).model.hidden, 64);
}

TEST(SetJsonPath, ParsesJsonValuesAndKeepsOtherTextAsStrings) {
  nlohmann::json document = nlohmann::json::object();
  set_json_path(document, "a.b", "3");
  set_json_path(document, "a.c", "true");
  set_json_path(document, "a.d", "[1, 2]");
  set_json_path(document, "e", "cora");
  EXPECT_EQ(document["a"]["b"], 3);
  EXPECT_EQ(document["a"]["c"], true);
  EXPECT_EQ(document["a"]["d"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(document["e"], "cora");
  EXPECT_THROW(set_json_path(document, "a..b", "1"), ConfigError);
}

TEST(SetJsonPath, IndexesListsAndAppendsOnePastTheEnd) {
  nlohmann::json document = nlohmann::json::object();
  set_json_path(document, "parts.0.rank", "3");  // an absent list is created by its first index
  set_json_path(document, "parts.0.factor", "1.5");
  set_json_path(document, "parts.1.rank", "4");
  set_json_path(document, "a.d", "[1, 2]");
  set_json_path(document, "a.d.1", "7");
  EXPECT_EQ(document["parts"],
            nlohmann::json::parse(R"([{"rank": 3, "factor": 1.5}, {"rank": 4}])"));
  EXPECT_EQ(document["a"]["d"], nlohmann::json::array({1, 7}));
  EXPECT_THROW(set_json_path(document, "parts.3.rank", "1"), ConfigError);
  EXPECT_THROW(set_json_path(document, "parts.x", "1"), ConfigError);
}

}  // namespace
}  // namespace gnnbed
