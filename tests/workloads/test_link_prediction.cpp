// Link-prediction workloads: the triples loader, the held-out split, entity partitions and edge
// buckets.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"
#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed {
namespace {

TEST(TriplesTsv, NumbersEntitiesAndRelationsByFirstAppearance) {
  const testing::TemporaryDirectory dir;
  const auto file =
      dir.write("kg.tsv",
                "# a comment\nparis\tcapital_of\tfrance\n\nberlin\tcapital_of\tgermany"
                "\r\nfrance\tborders\tgermany\n");
  const LinkPredictionData data = load_triples_tsv(file.string());
  EXPECT_EQ(data.num_entities, 4);
  EXPECT_EQ(data.relation_names, (std::vector<std::string>{"capital_of", "borders"}));
  EXPECT_EQ(data.train, (std::vector<Triple>{{0, 0, 1}, {2, 0, 3}, {1, 1, 3}}));
}

TEST(TriplesTsv, AShortLineIsAnErrorNamingTheFileLineAndField) {
  const testing::TemporaryDirectory dir;
  const auto file = dir.write("kg.tsv", "a\tr\tb\nc\tr\n");
  try {
    load_triples_tsv(file.string());
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), file.string());
    EXPECT_EQ(error.line(), 2);
    EXPECT_EQ(error.field(), "tail");
  }
}

TEST(LinkPredictionSplit, HoldsOutAboutTheFractionAndDependsOnlyOnTheSeed) {
  std::vector<Triple> all;
  for (int i = 0; i < 10000; ++i) all.push_back({i, 0, i + 1});
  LinkPredictionData first;
  LinkPredictionData again;
  LinkPredictionData other;
  split_held_out(all, 0.1, 7, first);
  split_held_out(all, 0.1, 7, again);
  split_held_out(all, 0.1, 8, other);
  EXPECT_NEAR(static_cast<double>(first.test.size()), 1000.0, 100.0);
  EXPECT_EQ(first.train.size() + first.test.size(), all.size());
  EXPECT_EQ(first.test, again.test);
  EXPECT_NE(first.test, other.test);
}

TEST(LinkPredictionSource, BadFieldsAreNamed) {
  EXPECT_THROW(link_prediction_source_from_json({{"test_fraction", 1.0}}, {}, "workload"),
               ConfigError);
  EXPECT_THROW(link_prediction_source_from_json({{"format", "csv"}}, {}, "workload"), ConfigError);
  EXPECT_THROW(link_prediction_source_from_json({{"sauce", "cora"}}, {}, "workload"), ConfigError);
}

TEST(LinkPredictionSource, BundledCoraHasItsCitationEdgesOnce) {
  const LinkPredictionData data = load_link_prediction({});
  EXPECT_EQ(data.num_entities, 2708);
  EXPECT_EQ(data.train.size() + data.test.size(), 5278u);  // edges.tsv: each undirected edge once
}

TEST(PlantedCommunities, GivesEachEntityDistinctEdgesWithinItsGroupOnly) {
  const LinkPredictionData data = planted_communities(47, 10, 4, 3);
  EXPECT_EQ(data.num_entities, 47);
  std::map<std::int32_t, std::set<std::int32_t>> targets;
  for (const Triple& e : data.train) {
    EXPECT_NE(e.source, e.target);
    EXPECT_EQ(e.source / 10, e.target / 10);
    EXPECT_TRUE(targets[e.source].insert(e.target).second) << "a repeated edge";
  }
  for (std::int32_t u = 0; u < 47; ++u) {
    EXPECT_EQ(targets[u].size(), 4u) << u;  // the last group, of 7, still has 6 others
  }
  EXPECT_EQ(planted_communities(47, 10, 4, 3).train, data.train);
  EXPECT_NE(planted_communities(47, 10, 4, 4).train, data.train);
}

TEST(EntityPartitioning, SplitsEveryEntityIntoPartitionsOfNearlyEqualSize) {
  const EntityPartitioning partitioning(103, 4, 5);
  std::set<std::int32_t> seen;
  for (int p = 0; p < 4; ++p) {
    EXPECT_TRUE(partitioning.size(p) == 25 || partitioning.size(p) == 26);
    for (std::size_t offset = 0; offset < partitioning.members(p).size(); ++offset) {
      const std::int32_t entity = partitioning.members(p)[offset];
      EXPECT_EQ(partitioning.partition_of(entity), p);
      EXPECT_EQ(partitioning.offset_of(entity), static_cast<std::int32_t>(offset));
      seen.insert(entity);
    }
  }
  EXPECT_EQ(seen.size(), 103u);
  EXPECT_THROW(EntityPartitioning(3, 4, 5), ConfigError);
}

TEST(EdgeBuckets, PutEveryEdgeInTheBucketOfItsEndsPartitionsAsOffsets) {
  const EntityPartitioning partitioning(50, 3, 9);
  std::vector<Triple> edges;
  for (int i = 0; i < 200; ++i) edges.push_back({(i * 7) % 50, i % 2, (i * 13 + 5) % 50});
  const EdgeBuckets buckets(edges, partitioning);
  std::int64_t total = 0;
  for (int lhs = 0; lhs < 3; ++lhs) {
    for (int rhs = 0; rhs < 3; ++rhs) {
      for (const Triple& e : buckets.edges({lhs, rhs})) {
        const Triple global{partitioning.members(lhs)[static_cast<std::size_t>(e.source)],
                            e.relation,
                            partitioning.members(rhs)[static_cast<std::size_t>(e.target)]};
        EXPECT_NE(std::find(edges.begin(), edges.end(), global), edges.end());
      }
      total += buckets.count({lhs, rhs});
    }
  }
  EXPECT_EQ(total, 200);
}

TEST(BucketCounts, OfAPlantedGraphCountedAsGeneratedEqualThoseOfItsEdgesHeld) {
  LinkPredictionSource source;
  source.source = "planted";
  source.entities = 3000;
  source.group_size = 30;
  source.degree = 7;
  source.test_fraction = 0.2;
  const LinkPredictionData data = load_link_prediction(source);
  const EntityPartitioning partitioning(source.entities, 5, 11);
  const std::vector<std::int64_t> counted = planted_bucket_counts(source, partitioning);
  EXPECT_EQ(counted, bucket_counts(data.train, partitioning));
  const EdgeBuckets buckets(data.train, partitioning);
  for (int l = 0; l < 5; ++l) {
    for (int r = 0; r < 5; ++r)
      EXPECT_EQ(counted[static_cast<std::size_t>(buckets.index({l, r}))], buckets.count({l, r}));
  }
  source.source = "cora";
  EXPECT_THROW(planted_bucket_counts(source, partitioning), ConfigError);
}

}  // namespace
}  // namespace gnnbed
