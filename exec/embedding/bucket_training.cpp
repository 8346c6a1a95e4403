// One bucket's training pass (bucket_training.hpp).
#include "exec/embedding/bucket_training.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"

namespace gnnbed {
namespace {

// Adagrad's epsilon, as PyTorch's and PBG's.
constexpr float kAdagradEpsilon = 1e-10f;

// The gradient rows of one table that a batch touches, and their row-wise Adagrad step.
class RowGradients {
 public:
  RowGradients(std::int64_t rows, int dimension)
      : slot_(static_cast<std::size_t>(rows), -1), dimension_(dimension) {}

  // Adds `gradient` (one row) to row `offset`'s.
  void add(std::int32_t offset, const float* gradient, float sign = 1.0f) {
    std::int32_t& slot = slot_[static_cast<std::size_t>(offset)];
    if (slot < 0) {
      slot = static_cast<std::int32_t>(touched_.size());
      touched_.push_back(offset);
      values_.resize(values_.size() + static_cast<std::size_t>(dimension_), 0.0f);
    }
    float* row = values_.data() + static_cast<std::ptrdiff_t>(slot) * dimension_;
    for (int j = 0; j < dimension_; ++j) row[j] += sign * gradient[j];
  }

  // PBG's RowAdagrad on every touched row (accumulator += mean squared gradient; row -= lr *
  // gradient / (sqrt(accumulator) + eps)), then forgets the rows.
  void step(PartitionTable& table, double learning_rate) {
    for (std::size_t k = 0; k < touched_.size(); ++k) {
      const float* gradient = values_.data() + k * static_cast<std::size_t>(dimension_);
      float squares = 0;
      for (int j = 0; j < dimension_; ++j) squares += gradient[j] * gradient[j];
      float& sum = table.adagrad_sum[static_cast<std::size_t>(touched_[k])];
      sum += squares / static_cast<float>(dimension_);
      const float step = static_cast<float>(learning_rate) / (std::sqrt(sum) + kAdagradEpsilon);
      float* row = table.row(touched_[k]);
      for (int j = 0; j < dimension_; ++j) row[j] -= step * gradient[j];
      slot_[static_cast<std::size_t>(touched_[k])] = -1;
    }
    touched_.clear();
    values_.clear();
  }

 private:
  std::vector<std::int32_t> slot_;  // by row: its place in values_, or -1
  std::vector<std::int32_t> touched_;
  std::vector<float> values_;
  int dimension_;
};

// What one batch reads and accumulates into.
struct Batch {
  const PartitionTable& lhs;
  const PartitionTable& rhs;
  RowGradients& lhs_gradient;
  RowGradients& rhs_gradient;  // lhs_gradient itself on the diagonal
  const RelationParameters& relations;
  std::vector<float>& relation_gradient;
  const BucketHyperparameters& hyper;
};

// Rows `offsets` of `table`, then the rows `extra` of it, packed.
std::vector<float> gather(const PartitionTable& table, std::span<const std::int32_t> offsets,
                          std::span<const std::int32_t> extra) {
  const auto d = static_cast<std::size_t>(table.dimension);
  std::vector<float> rows((offsets.size() + extra.size()) * d);
  float* out = rows.data();
  for (const auto& list : {offsets, extra}) {
    for (const std::int32_t offset : list) {
      std::copy_n(table.row(offset), d, out);
      out += d;
    }
  }
  return rows;
}

std::vector<std::int32_t> uniform_offsets(Rng& rng, std::int64_t rows, int count) {
  std::vector<std::int32_t> offsets(static_cast<std::size_t>(count));
  for (auto& offset : offsets) {
    offset = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(rows)));
  }
  return offsets;
}

// One side's loss: queries are `own` rows moved by the relation (sign +1: s + r; -1: t - r),
// candidates the chunk's `other` rows and the uniform negatives of the other side's table.
// Accumulates into the gradients of the query rows, the relations and the candidate rows.
double corrupt_side(Batch& batch, std::span<const Triple> chunk, bool corrupt_target,
                    std::span<const std::int32_t> uniform) {
  const int d = batch.lhs.dimension;
  const auto c = static_cast<int>(chunk.size());
  std::vector<std::int32_t> own(chunk.size());
  std::vector<std::int32_t> other(chunk.size());
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    own[i] = corrupt_target ? chunk[i].source : chunk[i].target;
    other[i] = corrupt_target ? chunk[i].target : chunk[i].source;
  }
  const PartitionTable& own_table = corrupt_target ? batch.lhs : batch.rhs;
  const PartitionTable& other_table = corrupt_target ? batch.rhs : batch.lhs;
  std::vector<float> queries = gather(own_table, own, {});
  const float sign = corrupt_target ? 1.0f : -1.0f;
  if (!batch.relations.empty()) {
    for (int i = 0; i < c; ++i) {
      const float* r = batch.relations.of(chunk[static_cast<std::size_t>(i)].relation);
      for (int j = 0; j < d; ++j) queries[static_cast<std::size_t>(i * d + j)] += sign * r[j];
    }
  }
  const std::vector<float> candidates = gather(other_table, other, uniform);
  const int num_candidates = c + static_cast<int>(uniform.size());
  std::vector<float> query_gradient(queries.size());
  std::vector<float> candidate_gradient(candidates.size());
  const double loss =
      ranking_loss(batch.hyper.scoring, queries.data(), c, candidates.data(), num_candidates, d,
                   batch.hyper.margin, query_gradient.data(), candidate_gradient.data());
  RowGradients& own_gradient = corrupt_target ? batch.lhs_gradient : batch.rhs_gradient;
  RowGradients& other_gradient = corrupt_target ? batch.rhs_gradient : batch.lhs_gradient;
  for (int i = 0; i < c; ++i) {
    const float* g = query_gradient.data() + static_cast<std::ptrdiff_t>(i) * d;
    own_gradient.add(own[static_cast<std::size_t>(i)], g);
    if (!batch.relations.empty()) {
      float* rg = batch.relation_gradient.data() +
                  static_cast<std::ptrdiff_t>(chunk[static_cast<std::size_t>(i)].relation) * d;
      for (int j = 0; j < d; ++j) rg[j] += sign * g[j];
    }
  }
  for (int n = 0; n < num_candidates; ++n) {
    const std::int32_t offset =
        n < c ? other[static_cast<std::size_t>(n)] : uniform[static_cast<std::size_t>(n - c)];
    other_gradient.add(offset, candidate_gradient.data() + static_cast<std::ptrdiff_t>(n) * d);
  }
  return loss;
}

double train_chunk(Batch& batch, std::span<const Triple> chunk, std::uint64_t chunk_seed) {
  Rng rng(chunk_seed);
  const int u = batch.hyper.uniform_negatives;
  const std::vector<std::int32_t> target_negatives = uniform_offsets(rng, batch.rhs.rows, u);
  const std::vector<std::int32_t> source_negatives = uniform_offsets(rng, batch.lhs.rows, u);
  return corrupt_side(batch, chunk, true, target_negatives) +
         corrupt_side(batch, chunk, false, source_negatives);
}

// Element-wise Adagrad on the relation parameters, then zeroes their gradient.
void step_relations(RelationParameters& relations, std::vector<float>& gradient,
                    double learning_rate) {
  for (std::size_t k = 0; k < gradient.size(); ++k) {
    relations.adagrad_sum[k] += gradient[k] * gradient[k];
    relations.translation[k] -= static_cast<float>(learning_rate) * gradient[k] /
                                (std::sqrt(relations.adagrad_sum[k]) + kAdagradEpsilon);
    gradient[k] = 0;
  }
}

}  // namespace

RelationParameters::RelationParameters(Scoring scoring, int num_relations, int dimension_)
    : dimension(dimension_) {
  if (scoring != Scoring::translation) return;
  const auto size = static_cast<std::size_t>(num_relations) * static_cast<std::size_t>(dimension);
  translation.assign(size, 0.0f);
  adagrad_sum.assign(size, 0.0f);
}

BucketStats train_bucket(std::span<const Triple> edges, PartitionTable& lhs, PartitionTable& rhs,
                         RelationParameters& relations, const BucketHyperparameters& hyper,
                         std::uint64_t seed) {
  std::vector<Triple> ordered(edges.begin(), edges.end());
  Rng order_rng(hash_mix(seed, 1));
  shuffle(std::span(ordered), order_rng);
  RowGradients lhs_gradient(lhs.rows, lhs.dimension);
  RowGradients rhs_own_gradient(&rhs == &lhs ? 0 : rhs.rows, rhs.dimension);
  RowGradients& rhs_gradient = &rhs == &lhs ? lhs_gradient : rhs_own_gradient;
  std::vector<float> relation_gradient(relations.translation.size(), 0.0f);
  Batch batch{lhs, rhs, lhs_gradient, rhs_gradient, relations, relation_gradient, hyper};
  BucketStats stats;
  const std::span<const Triple> all(ordered);
  for (std::size_t begin = 0, b = 0; begin < all.size(); begin += hyper.batch_size, ++b) {
    const std::span<const Triple> batch_edges =
        all.subspan(begin, std::min<std::size_t>(hyper.batch_size, all.size() - begin));
    for (std::size_t first = 0, k = 0; first < batch_edges.size();
         first += hyper.batch_negatives, ++k) {
      const std::span<const Triple> chunk = batch_edges.subspan(
          first, std::min<std::size_t>(hyper.batch_negatives, batch_edges.size() - first));
      stats.loss += train_chunk(batch, chunk, hash_mix(seed, 2, b, k));
    }
    lhs_gradient.step(lhs, hyper.learning_rate);
    if (&rhs != &lhs) rhs_gradient.step(rhs, hyper.learning_rate);
    if (!relations.empty()) step_relations(relations, relation_gradient, hyper.learning_rate);
  }
  stats.edges = static_cast<std::int64_t>(edges.size());
  return stats;
}

}  // namespace gnnbed
