// WorkloadConfig: reading it from JSON, and load_workload's dispatch to every source.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

TEST(WorkloadConfigJson, ReadsFieldsOverDefaultsAndRoundTrips) {
  WorkloadConfig defaults;
  defaults.num_classes = 5;
  const WorkloadConfig config = workload_config_from_json(
      {{"source", "csbm"}, {"num_nodes", 500}, {"rmat_a", 0.4}, {"symmetrize", false}}, defaults,
      "workload");
  EXPECT_EQ(config.source, "csbm");
  EXPECT_EQ(config.num_nodes, 500);
  EXPECT_EQ(config.num_classes, 5);
  ASSERT_TRUE(config.rmat_a.has_value());
  EXPECT_EQ(*config.rmat_a, 0.4);
  EXPECT_FALSE(config.rmat_b.has_value());
  EXPECT_FALSE(config.symmetrize);
  const WorkloadConfig again = workload_config_from_json(to_json(config), WorkloadConfig{}, "w");
  EXPECT_EQ(to_json(again), to_json(config));
}

TEST(WorkloadConfigJson, UnknownFieldsAndWrongTypesNameTheField) {
  try {
    workload_config_from_json({{"sourse", "cora"}}, WorkloadConfig{}, "workload");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.sourse");
    EXPECT_NE(std::string(error.what()).find("unknown field"), std::string::npos);
  }
  try {
    workload_config_from_json({{"num_nodes", "many"}}, WorkloadConfig{}, "workload");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.num_nodes");
  }
}

Dataset load(std::initializer_list<std::pair<std::string, nlohmann::json>> fields) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : fields) object[key] = value;
  return load_workload(workload_config_from_json(object, WorkloadConfig{}, "workload"));
}

TEST(LoadWorkload, BundledCoraComesRowNormalised) {
  const Dataset cora = load({{"source", "cora"}});
  EXPECT_EQ(cora.num_nodes(), 2708);
  ASSERT_EQ(cora.feature_dim(), 1433);
  std::vector<float> row(1433);
  const NodeId node = 0;
  cora.features->gather(std::span<const NodeId>(&node, 1), row.data());
  double sum = 0;
  for (const float value : row) sum += value;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(cora.features->describe()["row_normalized"], true);

  const Dataset raw = load({{"source", "cora"}, {"feature_normalization", "none"}});
  raw.features->gather(std::span<const NodeId>(&node, 1), row.data());
  sum = 0;
  for (const float value : row) sum += value;
  EXPECT_GT(sum, 1.5) << "raw bag-of-words rows count words";
}

TEST(LoadWorkload, FeatureOptions) {
  EXPECT_EQ(load({{"source", "cora"}, {"features", "none"}}).features, nullptr);
  const Dataset generated =
      load({{"source", "cora"}, {"features", "generated"}, {"feature_dim", 7}});
  EXPECT_EQ(generated.feature_dim(), 7);
  EXPECT_EQ(generated.features->describe()["kind"], "generated");
  // Pubmed ships without features: "auto" generates them.
  EXPECT_EQ(load({{"source", "pubmed"}, {"feature_dim", 12}}).feature_dim(), 12);
  EXPECT_THROW(load({{"source", "csbm"}, {"num_nodes", 100}, {"feature_normalization", "row"}}),
               ConfigError);
}

// A scale resizes a preset; on any other source it would be ignored, so it is refused.
TEST(LoadWorkload, OnlyAPresetTakesAScale) {
  EXPECT_THROW(load({{"source", "cora"}, {"scale", 0.5}}), ConfigError);
  EXPECT_THROW(load({{"source", "csbm"}, {"num_nodes", 100}, {"scale", 2}}), ConfigError);
  EXPECT_NO_THROW(load({{"source", "cora"}, {"scale", 1}}));
  EXPECT_EQ(load({{"source", "products-like"}, {"scale", 0.001}}).num_nodes(), 2449);
}

TEST(LoadWorkload, StoredFeaturesHoldTheGeneratedValues) {
  const Dataset generated = load({{"source", "csbm"}, {"num_nodes", 300}, {"feature_dim", 6}});
  const Dataset stored =
      load({{"source", "csbm"}, {"num_nodes", 300}, {"feature_dim", 6}, {"features", "stored"}});
  EXPECT_EQ(generated.features->describe()["kind"], "generated");
  EXPECT_EQ(stored.features->describe()["kind"], "stored");
  EXPECT_EQ(stored.features->stored_bytes(), 300 * 6 * 4);
  std::vector<NodeId> nodes(300);
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  std::vector<float> expected(300 * 6);
  std::vector<float> values(300 * 6);
  generated.features->gather(nodes, expected.data());
  stored.features->gather(nodes, values.data());
  EXPECT_EQ(values, expected);
}

TEST(LoadWorkload, GeneratedSourcesFollowTheirParameters) {
  const Dataset csbm = load({{"source", "csbm"},
                             {"num_nodes", 400},
                             {"average_degree", 6},
                             {"num_classes", 3},
                             {"feature_dim", 9}});
  EXPECT_EQ(csbm.num_nodes(), 400);
  EXPECT_EQ(csbm.graph.num_edges(), 400 * 6);
  EXPECT_EQ(csbm.num_classes, 3);
  EXPECT_EQ(csbm.feature_dim(), 9);

  const Dataset rmat = load({{"source", "rmat"},
                             {"num_nodes", 1000},
                             {"average_degree", 8},
                             {"num_classes", 4},
                             {"train_fraction", 0.5}});
  EXPECT_EQ(rmat.graph.num_edges(), 1000 * 8);
  EXPECT_EQ(rmat.split.train.size(), 500u);

  const Dataset preset = load({{"source", "products-like"}, {"scale", 0.001}});
  EXPECT_EQ(preset.name, "products-like@0.001");
  EXPECT_EQ(preset.num_nodes(), 2449);
  EXPECT_EQ(preset.feature_dim(), 100);
  EXPECT_EQ(preset.num_classes, 47);
  const Dataset skewed = load({{"source", "products-like"},
                               {"scale", 0.001},
                               {"rmat_a", 0.7},
                               {"rmat_b", 0.1},
                               {"rmat_c", 0.1}});
  EXPECT_EQ(skewed.graph.num_edges(), preset.graph.num_edges());
  EXPECT_FALSE(std::equal(skewed.graph.sources().begin(), skewed.graph.sources().end(),
                          preset.graph.sources().begin()))
      << "the R-MAT override must change the structure";
}

TEST(LoadWorkload, EdgeHomophilyMakesCommunitiesOfRmatAndThePresetsOnly) {
  const Dataset own = load({{"source", "products-like"}, {"scale", 0.002}});
  const Dataset independent =
      load({{"source", "products-like"}, {"scale", 0.002}, {"edge_homophily", 0}});
  EXPECT_EQ(independent.graph.num_edges(), own.graph.num_edges());
  EXPECT_FALSE(std::equal(independent.graph.sources().begin(), independent.graph.sources().end(),
                          own.graph.sources().begin()));
  const Dataset rmat = load({{"source", "rmat"},
                             {"num_nodes", 4000},
                             {"average_degree", 8},
                             {"num_classes", 5},
                             {"edge_homophily", 0.7}});
  std::int64_t same = 0;
  for (NodeId v = 0; v < rmat.num_nodes(); ++v) {
    for (const NodeId u : rmat.graph.in_neighbors(v))
      same += rmat.labels[static_cast<std::size_t>(u)] == rmat.labels[static_cast<std::size_t>(v)];
  }
  EXPECT_EQ(same, 2 * std::llround(0.7 * 4000 * 8 / 2));
  try {
    load({{"source", "products-like"}, {"scale", 0.002}, {"edge_homophily", -0.1}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.edge_homophily");
  }
  try {
    load({{"source", "csbm"}, {"edge_homophily", 0.5}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.edge_homophily");
    EXPECT_NE(std::string(error.what()).find("csbm"), std::string::npos) << error.what();
  }
}

TEST(LoadWorkload, FeatureDimSetsGeneratedWidthsAndIsRefusedWhereTheSourceFixesThem) {
  const Dataset preset = load({{"source", "products-like"}, {"scale", 0.001}, {"feature_dim", 12}});
  EXPECT_EQ(preset.feature_dim(), 12) << "a preset's own width (100) is only its default";
  EXPECT_EQ(load({{"source", "rmat"}, {"num_nodes", 500}}).feature_dim(),
            WorkloadConfig::kDefaultFeatureDim);
  EXPECT_EQ(
      load({{"source", "cora"}, {"features", "generated"}, {"feature_dim", 16}}).feature_dim(), 16);
  const auto refused = [](const nlohmann::json& object, const std::string& mentions) {
    try {
      load_workload(workload_config_from_json(object, WorkloadConfig{}, "workload"));
      ADD_FAILURE() << "expected ConfigError for " << object.dump();
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "workload.feature_dim");
      EXPECT_NE(std::string(error.what()).find(mentions), std::string::npos) << error.what();
    }
  };
  refused({{"source", "cora"}, {"feature_dim", 16}}, "1433");
  refused({{"source", "rmat"}, {"num_nodes", 500}, {"features", "none"}, {"feature_dim", 16}},
          "none");
  refused({{"source", "rmat"}, {"num_nodes", 500}, {"feature_dim", 0}}, "at least 1");
}

TEST(LoadWorkload, FileSourcesReadTheirPath) {
  const TemporaryDirectory dir;
  const auto edges = dir.write("tiny.txt", "# a comment\n0 1\n1 2\n2 3\n3 0\n");
  const Dataset graph = load({{"source", "edge-list"},
                              {"path", edges.string()},
                              {"num_classes", 2},
                              {"train_fraction", 0.5},
                              {"val_fraction", 0.25},
                              {"test_fraction", 0.25}});
  EXPECT_EQ(graph.name, "tiny");
  EXPECT_EQ(graph.num_nodes(), 4);
  EXPECT_EQ(graph.graph.num_edges(), 8);
  EXPECT_EQ(graph.split.train.size(), 2u);
  EXPECT_NE(graph.features, nullptr) << "edge lists get generated features";

  const Dataset cora =
      load({{"source", "planetoid-tsv"}, {"path", testing::bundled_dataset("cora").string()}});
  EXPECT_EQ(cora.num_nodes(), 2708);
}

TEST(LoadWorkload, UnknownSourceListsTheKnownOnes) {
  try {
    load({{"source", "corra"}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.source");
    const std::string message = error.what();
    for (const char* name :
         {"cora", "citeseer", "csbm", "edge-list", "ogb", "binary", "products-like"}) {
      EXPECT_NE(message.find(name), std::string::npos) << name;
    }
  }
}

TEST(LoadWorkload, FileSourceWithoutPathIsAConfigError) {
  try {
    load({{"source", "binary"}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "workload.path");
  }
}

TEST(LoadWorkload, ParameterChecksNameTheField) {
  const std::pair<const char*, nlohmann::json> bad[] = {
      {"scale", 0},       {"num_classes", 1},    {"homophily", 1.5},
      {"feature_dim", 0}, {"features", "dense"}, {"train_fraction", 0.9}};
  for (const auto& [field, value] : bad) {
    try {
      load({{"source", "csbm"}, {field, value}});
      FAIL() << field;
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), std::string("workload.") + field) << error.what();
    }
  }
}

}  // namespace
}  // namespace gnnbed
