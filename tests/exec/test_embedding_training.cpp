// PBG-style embedding training: the ranking loss's gradients against finite differences, one
// bucket's update against a plain reference written from the definitions, and training with
// partitions swapped to disk against training in memory.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "exec/embedding/bucket_training.hpp"
#include "exec/embedding/embedding_trainer.hpp"
#include "exec/embedding/link_ranking.hpp"
#include "exec/embedding/sampled_ranking.hpp"
#include "tests/support/planted_embeddings.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = standard_normal(hash_mix(seed, i));
  return values;
}

double loss_of(Scoring scoring, const std::vector<float>& queries, int c,
               const std::vector<float>& candidates, int n, int d, double margin) {
  std::vector<float> gq(queries.size());
  std::vector<float> gx(candidates.size());
  return ranking_loss(scoring, queries.data(), c, candidates.data(), n, d, margin, gq.data(),
                      gx.data());
}

void expect_gradients_match_finite_differences(Scoring scoring) {
  const int c = 4;
  const int n = 7;
  const int d = 5;
  const double margin = 2.0;  // most pairs violate it: the gradient has many terms
  std::vector<float> queries = random_values(static_cast<std::size_t>(c * d), 11);
  std::vector<float> candidates = random_values(static_cast<std::size_t>(n * d), 12);
  std::vector<float> gq(queries.size());
  std::vector<float> gx(candidates.size());
  ranking_loss(scoring, queries.data(), c, candidates.data(), n, d, margin, gq.data(), gx.data());
  const float h = 1e-3f;
  for (auto* values : {&queries, &candidates}) {
    const std::vector<float>& analytic = values == &queries ? gq : gx;
    for (std::size_t k = 0; k < values->size(); ++k) {
      const float saved = (*values)[k];
      (*values)[k] = saved + h;
      const double up = loss_of(scoring, queries, c, candidates, n, d, margin);
      (*values)[k] = saved - h;
      const double down = loss_of(scoring, queries, c, candidates, n, d, margin);
      (*values)[k] = saved;
      EXPECT_NEAR(analytic[k], (up - down) / (2 * h), 5e-3)
          << (values == &queries ? "query" : "candidate") << " entry " << k;
    }
  }
}

TEST(RankingLoss, DotGradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(Scoring::dot);
}

TEST(RankingLoss, TranslationGradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(Scoring::translation);
}

TEST(RankingLoss, SatisfiedMarginsGiveNoLossAndNoGradient) {
  // Each query is its own positive candidate, far from the other.
  const std::vector<float> queries{10, 0, 0, 10};
  const std::vector<float> candidates{10, 0, 0, 10};
  std::vector<float> gq(4, 1.0f);
  std::vector<float> gx(4, 1.0f);
  EXPECT_EQ(ranking_loss(Scoring::dot, queries.data(), 2, candidates.data(), 2, 2, 0.1, gq.data(),
                         gx.data()),
            0.0);
  for (const float g : gq) EXPECT_EQ(g, 0.0f);
  for (const float g : gx) EXPECT_EQ(g, 0.0f);
}

// score and its gradients, in double, from the definitions.
double score(Scoring scoring, const std::vector<double>& q, const std::vector<double>& x) {
  double dot = 0;
  double squared = 0;
  for (std::size_t j = 0; j < q.size(); ++j) {
    dot += q[j] * x[j];
    squared += (q[j] - x[j]) * (q[j] - x[j]);
  }
  return scoring == Scoring::dot ? dot : -std::sqrt(squared);
}

// d score / d q (the gradient in x is its negative for translation, q for dot).
std::vector<double> score_gradient_q(Scoring scoring, const std::vector<double>& q,
                                     const std::vector<double>& x) {
  std::vector<double> g(q.size());
  const double distance = -score(Scoring::translation, q, x);
  for (std::size_t j = 0; j < q.size(); ++j) {
    g[j] = scoring == Scoring::dot ? x[j] : (x[j] - q[j]) / distance;
  }
  return g;
}
std::vector<double> score_gradient_x(Scoring scoring, const std::vector<double>& q,
                                     const std::vector<double>& x) {
  if (scoring == Scoring::dot) return q;
  std::vector<double> g = score_gradient_q(scoring, q, x);
  for (double& v : g) v = -v;
  return g;
}

struct ReferenceModel {
  std::vector<std::vector<double>> lhs, rhs, relations;  // rows
  std::vector<std::vector<double>> lhs_grad, rhs_grad, relation_grad;
};

std::vector<std::vector<double>> rows_of(const PartitionTable& table) {
  std::vector<std::vector<double>> rows;
  for (std::int64_t i = 0; i < table.rows; ++i) {
    rows.emplace_back(table.row(i), table.row(i) + table.dimension);
  }
  return rows;
}

void add(std::vector<double>& to, const std::vector<double>& g, double sign) {
  for (std::size_t j = 0; j < to.size(); ++j) to[j] += sign * g[j];
}

// One side of the reference: queries own_rows[own] + sign * r, candidates other_rows[other].
void reference_side(Scoring scoring, double margin, const std::vector<Triple>& edges,
                    bool corrupt_target, ReferenceModel& m, bool diagonal) {
  auto& own_rows = corrupt_target ? m.lhs : m.rhs;
  auto& other_rows = corrupt_target ? m.rhs : m.lhs;
  auto& own_grad = corrupt_target || diagonal ? m.lhs_grad : m.rhs_grad;
  auto& other_grad = !corrupt_target || diagonal ? m.lhs_grad : m.rhs_grad;
  const double sign = corrupt_target ? 1 : -1;
  const auto own = [&](const Triple& e) { return corrupt_target ? e.source : e.target; };
  const auto other = [&](const Triple& e) { return corrupt_target ? e.target : e.source; };
  for (std::size_t i = 0; i < edges.size(); ++i) {
    std::vector<double> q = own_rows[static_cast<std::size_t>(own(edges[i]))];
    if (!m.relations.empty())
      add(q, m.relations[static_cast<std::size_t>(edges[i].relation)], sign);
    const auto& positive = other_rows[static_cast<std::size_t>(other(edges[i]))];
    for (std::size_t n = 0; n < edges.size(); ++n) {
      const auto& x = other_rows[static_cast<std::size_t>(other(edges[n]))];
      if (n == i || margin - score(scoring, q, positive) + score(scoring, q, x) <= 0) continue;
      std::vector<double> gq = score_gradient_q(scoring, q, x);
      add(gq, score_gradient_q(scoring, q, positive), -1);
      add(own_grad[static_cast<std::size_t>(own(edges[i]))], gq, 1);
      if (!m.relations.empty()) {
        add(m.relation_grad[static_cast<std::size_t>(edges[i].relation)], gq, sign);
      }
      add(other_grad[static_cast<std::size_t>(other(edges[n]))], score_gradient_x(scoring, q, x),
          1);
      add(other_grad[static_cast<std::size_t>(other(edges[i]))],
          score_gradient_x(scoring, q, positive), -1);
    }
  }
}

void row_adagrad(std::vector<std::vector<double>>& rows,
                 const std::vector<std::vector<double>>& grads, double lr) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double mean_square = 0;
    for (const double g : grads[i]) mean_square += g * g / static_cast<double>(grads[i].size());
    if (mean_square == 0) continue;
    for (std::size_t j = 0; j < rows[i].size(); ++j) {
      rows[i][j] -= lr * grads[i][j] / std::sqrt(mean_square);
    }
  }
}

void expect_rows_near(const PartitionTable& table, const std::vector<std::vector<double>>& rows) {
  for (std::int64_t i = 0; i < table.rows; ++i) {
    for (int j = 0; j < table.dimension; ++j) {
      EXPECT_NEAR(table.row(i)[j], rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)],
                  2e-5)
          << "row " << i << " coordinate " << j;
    }
  }
}

// One batch holding one chunk of every edge and no uniform negatives: the bucket's update is
// then the definitions' (loss summed over both sides, one RowAdagrad step from zero state).
void expect_bucket_update_matches_reference(Scoring scoring, bool diagonal) {
  const int d = 4;
  const std::vector<std::int32_t> lhs_members{0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> rhs_members{6, 7, 8, 9, 10};
  PartitionTable lhs = initial_partition_table(lhs_members, d, 0.5, 3);
  PartitionTable rhs = initial_partition_table(rhs_members, d, 0.5, 3);
  PartitionTable& right = diagonal ? lhs : rhs;
  const std::vector<Triple> edges{{0, 0, 1}, {1, 1, 2}, {2, 0, 0}, {3, 1, 4},
                                  {4, 0, 3}, {5, 1, 1}, {0, 0, 4}, {2, 1, 3}};
  RelationParameters relations(scoring, 2, d);
  for (std::size_t k = 0; k < relations.translation.size(); ++k) {
    relations.translation[k] = 0.1f * static_cast<float>(k % 5);
  }
  ReferenceModel m{rows_of(lhs), rows_of(right), {}, {}, {}, {}};
  for (int r = 0; r < 2 && !relations.empty(); ++r) {
    m.relations.emplace_back(relations.of(r), relations.of(r) + d);
  }
  m.lhs_grad.assign(m.lhs.size(), std::vector<double>(d, 0.0));
  m.rhs_grad.assign(m.rhs.size(), std::vector<double>(d, 0.0));
  m.relation_grad.assign(m.relations.size(), std::vector<double>(d, 0.0));
  BucketHyperparameters hyper;
  hyper.scoring = scoring;
  hyper.margin = 1.0;
  hyper.learning_rate = 0.1;
  hyper.batch_size = 100;
  hyper.batch_negatives = 100;
  hyper.uniform_negatives = 0;
  reference_side(scoring, hyper.margin, edges, true, m, diagonal);
  reference_side(scoring, hyper.margin, edges, false, m, diagonal);
  train_bucket(edges, lhs, right, relations, hyper, 42);
  row_adagrad(m.lhs, m.lhs_grad, hyper.learning_rate);
  expect_rows_near(lhs, m.lhs);
  if (!diagonal) {
    row_adagrad(m.rhs, m.rhs_grad, hyper.learning_rate);
    expect_rows_near(rhs, m.rhs);
  }
  for (std::size_t r = 0; r < m.relations.size(); ++r) {
    for (int j = 0; j < d; ++j) {
      const double g = m.relation_grad[r][static_cast<std::size_t>(j)];
      const double expected = m.relations[r][static_cast<std::size_t>(j)] -
                              (g == 0 ? 0 : hyper.learning_rate * g / std::abs(g));
      EXPECT_NEAR(relations.of(static_cast<std::int32_t>(r))[j], expected, 2e-5);
    }
  }
}

TEST(BucketTraining, DotUpdateEqualsTheReference) {
  expect_bucket_update_matches_reference(Scoring::dot, false);
}
TEST(BucketTraining, TranslationUpdateEqualsTheReference) {
  expect_bucket_update_matches_reference(Scoring::translation, false);
}
TEST(BucketTraining, DiagonalBucketUpdatesOneTableOnce) {
  expect_bucket_update_matches_reference(Scoring::dot, true);
  expect_bucket_update_matches_reference(Scoring::translation, true);
}

// The filtered MRR of that model: the mean of H(k) / k, k = 1 + the group's entities other than
// the query with no known edge to or from it.
double planted_ceiling(const LinkPredictionData& data, int size) {
  std::map<std::int32_t, std::set<std::int32_t>> targets;
  std::map<std::int32_t, std::set<std::int32_t>> sources;
  for (const auto* list : {&data.train, &data.test}) {
    for (const Triple& e : *list) {
      targets[e.source].insert(e.target);
      sources[e.target].insert(e.source);
    }
  }
  const auto expected_reciprocal_rank = [&](std::size_t known) {
    const auto k = static_cast<std::size_t>(size) - known;  // the truth and the unknown others
    double harmonic = 0;
    for (std::size_t r = 1; r <= k; ++r) harmonic += 1.0 / static_cast<double>(r);
    return harmonic / static_cast<double>(k);
  };
  double sum = 0;
  for (const Triple& e : data.test) {
    sum += expected_reciprocal_rank(targets[e.source].size());
    sum += expected_reciprocal_rank(sources[e.target].size());
  }
  return sum / static_cast<double>(2 * data.test.size());
}

TEST(EmbeddingTraining, LearnsPlantedCommunitiesNearlyAsWellAsTheyAllow) {
  const LinkPredictionData data =
      load_link_prediction(testing::planted_embedding_config(800, 8, 1).workload);
  const double ceiling = planted_ceiling(data, 20);
  std::vector<double> mrr;
  for (const int partitions : {1, 4}) {
    const EmbeddingReport report = train_embeddings(
        data, testing::planted_embedding_config(800, 8, partitions), [](const auto&) {});
    EXPECT_GT(report.test.filtered.mrr, 0.85 * ceiling) << partitions << " partitions";
    EXPECT_LT(report.test.filtered.mrr, 1.1 * ceiling) << partitions << " partitions";
    mrr.push_back(report.test.filtered.mrr);
  }
  EXPECT_NEAR(mrr[0], mrr[1], 0.03);  // partitioning changes the negatives, not what is learnt
}

TEST(EmbeddingTraining, SwappingPartitionsToDiskComputesExactlyWhatMemoryDoes) {
  const testing::TemporaryDirectory dir;
  EmbeddingExperimentConfig config = testing::planted_embedding_config(200, 6, 3);
  config.model.scoring = "translation";
  config.training.epochs = 3;
  config.training.bucket_order = "affinity";
  const LinkPredictionData data = load_link_prediction(config.workload);
  EmbeddingModelState in_memory;
  const EmbeddingReport memory_report = train_embeddings(
      data, config, [](const auto&) {}, &in_memory);
  config.training.swap_directory = (dir.path() / "swap").string();
  EmbeddingModelState swapped;
  const EmbeddingReport disk_report = train_embeddings(
      data, config, [](const auto&) {}, &swapped);
  ASSERT_EQ(in_memory.partitions.size(), swapped.partitions.size());
  for (std::size_t p = 0; p < swapped.partitions.size(); ++p) {
    EXPECT_EQ(in_memory.partitions[p].embeddings, swapped.partitions[p].embeddings) << p;
    EXPECT_EQ(in_memory.partitions[p].adagrad_sum, swapped.partitions[p].adagrad_sum) << p;
  }
  EXPECT_EQ(in_memory.relations.translation, swapped.relations.translation);
  EXPECT_EQ(memory_report.test.filtered.mrr, disk_report.test.filtered.mrr);
  EXPECT_EQ(memory_report.swaps.bytes_written, 0);
  EXPECT_GT(disk_report.swaps.bytes_written, 0);
  EXPECT_GT(disk_report.swaps.loads, 0);
  EXPECT_TRUE(std::filesystem::is_empty(config.training.swap_directory));  // scratch removed
}

TEST(EmbeddingTraining, RefusesASwapDirectoryHoldingAnotherRunsPartitions) {
  const testing::TemporaryDirectory dir;
  dir.write("swap/partition-1.bin", "someone else's");
  EmbeddingExperimentConfig config = testing::planted_embedding_config(40, 3, 2);
  config.training.swap_directory = (dir.path() / "swap").string();
  const LinkPredictionData data = load_link_prediction(config.workload);
  EXPECT_THROW(train_embeddings(data, config, [](const auto&) {}), ConfigError);
  EXPECT_EQ(std::ifstream(dir.path() / "swap/partition-1.bin").get(), 's');  // untouched
}

// Entity i's one-dimensional embedding is i: a held-out edge 4 -> 2 scores 4 * x against targets
// x (entities 3 and 4 above 2) and x * 2 against sources (none above 4).
// A store whose entity i has the one-dimensional embedding i.
MemoryPartitionStore line_store(const EntityPartitioning& partitioning) {
  EmbeddingModelConfig model;
  model.dimension = 1;
  MemoryPartitionStore store(partitioning, model, 1);
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    for (std::size_t k = 0; k < partitioning.members(p).size(); ++k) {
      store.table(p).row(static_cast<std::int64_t>(k))[0] =
          static_cast<float>(partitioning.members(p)[k]);
    }
  }
  return store;
}

LinkRankingMetrics rank_on_a_line(int partitions, const std::vector<Triple>& known) {
  const EntityPartitioning partitioning(5, partitions, 1);
  MemoryPartitionStore store = line_store(partitioning);
  const std::vector<Triple> held_out{{4, 0, 2}};
  std::vector<Triple> all = known;
  all.push_back(held_out[0]);
  return rank_held_out(held_out, {all}, partitioning, store, RelationParameters(Scoring::dot, 1, 1),
                       Scoring::dot);
}

TEST(LinkRanking, RanksCountEntitiesScoringHigherLeavingKnownEdgesAndTheQueryOutWhenFiltered) {
  for (const int partitions : {1, 2, 5}) {
    const LinkRankingMetrics alone = rank_on_a_line(partitions, {});
    EXPECT_DOUBLE_EQ(alone.raw.mrr, (1.0 / 3 + 1.0) / 2) << partitions;       // ranks 3 and 1
    EXPECT_DOUBLE_EQ(alone.filtered.mrr, (1.0 / 2 + 1.0) / 2) << partitions;  // 4 itself left out
    EXPECT_DOUBLE_EQ(alone.raw.hits_at_1, 0.5);
    EXPECT_EQ(alone.rankings, 2);
    const LinkRankingMetrics known = rank_on_a_line(partitions, {{4, 0, 3}});
    EXPECT_DOUBLE_EQ(known.raw.mrr, (1.0 / 3 + 1.0) / 2) << partitions;
    EXPECT_DOUBLE_EQ(known.filtered.mrr, 1.0) << partitions;  // 3 completes a known edge
  }
}

TEST(EmbeddingTraining, ComputesTheSameModelOnAnyNumberOfThreads) {
  EmbeddingExperimentConfig config = testing::planted_embedding_config(300, 5, 2);
  config.training.epochs = 2;
  config.training.batch_size = 200;  // several chunks per batch, so threads share batches
  const LinkPredictionData data = load_link_prediction(config.workload);
  std::vector<EmbeddingModelState> states(2);
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    train_embeddings(
        data, config, [](const auto&) {}, &states[static_cast<std::size_t>(threads - 1)]);
  }
  for (std::size_t p = 0; p < states[0].partitions.size(); ++p) {
    EXPECT_EQ(states[0].partitions[p].embeddings, states[1].partitions[p].embeddings) << p;
  }
}

// Held out 4 -> 2 and 1 -> 0, one chunk, no uniform candidates: 4 -> 2 ranks first on both sides;
// 1 -> 0's target 0 scores 0 against 2's 2 (rank 2 raw), its source side scores 0 everywhere.
TEST(SampledRanking, RanksAgainstTheChunksOtherEndsLeavingKnownEdgesOutWhenFiltered) {
  for (const int partitions : {1, 3}) {
    const EntityPartitioning partitioning(5, partitions, 2);
    MemoryPartitionStore store = line_store(partitioning);
    const std::vector<Triple> held_out{{4, 0, 2}, {1, 0, 0}};
    std::vector<Triple> known = held_out;
    const RelationParameters relations(Scoring::dot, 1, 1);
    const SampledCandidates candidates{2, 0, 1};
    const LinkRankingMetrics alone = rank_held_out_sampled(held_out, {known}, partitioning, store,
                                                           relations, Scoring::dot, candidates);
    EXPECT_DOUBLE_EQ(alone.raw.mrr, (1 + 1 + 0.5 + 1) / 4.0) << partitions;
    EXPECT_DOUBLE_EQ(alone.filtered.mrr, (1 + 1 + 0.5 + 1) / 4.0) << partitions;
    known.push_back({1, 0, 2});
    const LinkRankingMetrics filtered = rank_held_out_sampled(
        held_out, {known}, partitioning, store, relations, Scoring::dot, candidates);
    EXPECT_DOUBLE_EQ(filtered.raw.mrr, (1 + 1 + 0.5 + 1) / 4.0) << partitions;
    EXPECT_DOUBLE_EQ(filtered.filtered.mrr, 1.0) << partitions;  // 1 -> 2 is a known edge
  }
}

TEST(SampledRanking, RanksAnEdgeNoLowerThanRankingAgainstEveryEntity) {
  EmbeddingExperimentConfig config = testing::planted_embedding_config(2000, 6, 2);
  config.training.epochs = 5;
  const LinkPredictionData data = load_link_prediction(config.workload);
  const EmbeddingReport full = train_embeddings(data, config, [](const auto&) {});
  config.training.eval_candidates = "sampled";
  config.training.eval_batch_negatives = 50;
  config.training.eval_uniform_negatives = 50;
  const EmbeddingReport sampled = train_embeddings(data, config, [](const auto&) {});
  EXPECT_EQ(sampled.test.rankings, full.test.rankings);
  // Fewer candidates can only rank an edge as high or higher.
  EXPECT_GE(sampled.test.raw.mrr, full.test.raw.mrr);
  EXPECT_GE(sampled.test.filtered.mrr, full.test.filtered.mrr);
}

}  // namespace
}  // namespace gnnbed
