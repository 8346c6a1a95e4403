// One bucket's training pass (bucket_training.hpp).
#include "exec/embedding/bucket_training.hpp"

#include <algorithm>
#include <cmath>

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
  void add(std::int32_t offset, const float* gradient) {
    std::int32_t& slot = slot_[static_cast<std::size_t>(offset)];
    if (slot < 0) {
      slot = static_cast<std::int32_t>(touched_.size());
      touched_.push_back(offset);
      values_.resize(values_.size() + static_cast<std::size_t>(dimension_), 0.0f);
    }
    float* row = values_.data() + static_cast<std::ptrdiff_t>(slot) * dimension_;
    for (int j = 0; j < dimension_; ++j) row[j] += gradient[j];
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

// Rows `offsets` of `table`, packed.
std::vector<float> gather(const PartitionTable& table, std::span<const std::int32_t> offsets) {
  const auto d = static_cast<std::size_t>(table.dimension);
  std::vector<float> rows(offsets.size() * d);
  for (std::size_t k = 0; k < offsets.size(); ++k)
    std::copy_n(table.row(offsets[k]), d, &rows[k * d]);
  return rows;
}

std::vector<std::int32_t> uniform_offsets(Rng& rng, std::int64_t rows, int count) {
  std::vector<std::int32_t> offsets(static_cast<std::size_t>(count));
  for (auto& offset : offsets) {
    offset = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(rows)));
  }
  return offsets;
}

// One side of one chunk, computed from the parameters as they were before the batch: its loss,
// and the gradients of its query rows (in `own`, sign +1: s + r; -1: t - r) and candidate rows
// (the chunk's `other` rows, then the uniform negatives).
struct SideGradient {
  bool corrupt_target = true;
  double loss = 0;
  std::vector<std::int32_t> own;
  std::vector<std::int32_t> candidates;
  std::vector<float> query_gradient;
  std::vector<float> candidate_gradient;
};

struct ChunkGradient {
  std::span<const Triple> chunk;
  SideGradient target_side;
  SideGradient source_side;
};

SideGradient corrupt_side(const Batch& batch, std::span<const Triple> chunk, bool corrupt_target,
                          std::span<const std::int32_t> uniform) {
  const int d = batch.lhs.dimension;
  const auto c = static_cast<int>(chunk.size());
  SideGradient side;
  side.corrupt_target = corrupt_target;
  for (const Triple& edge : chunk) {
    side.own.push_back(corrupt_target ? edge.source : edge.target);
    side.candidates.push_back(corrupt_target ? edge.target : edge.source);
  }
  side.candidates.insert(side.candidates.end(), uniform.begin(), uniform.end());
  std::vector<float> queries = gather(corrupt_target ? batch.lhs : batch.rhs, side.own);
  const float sign = corrupt_target ? 1.0f : -1.0f;
  if (!batch.relations.empty()) {
    for (int i = 0; i < c; ++i) {
      const float* r = batch.relations.of(chunk[static_cast<std::size_t>(i)].relation);
      for (int j = 0; j < d; ++j) queries[static_cast<std::size_t>(i * d + j)] += sign * r[j];
    }
  }
  const std::vector<float> candidates =
      gather(corrupt_target ? batch.rhs : batch.lhs, side.candidates);
  side.query_gradient.resize(queries.size());
  side.candidate_gradient.resize(candidates.size());
  side.loss = ranking_loss(batch.hyper.scoring, queries.data(), c, candidates.data(),
                           static_cast<int>(side.candidates.size()), d, batch.hyper.margin,
                           side.query_gradient.data(), side.candidate_gradient.data());
  return side;
}

ChunkGradient chunk_gradient(const Batch& batch, std::span<const Triple> chunk,
                             std::uint64_t chunk_seed) {
  Rng rng(chunk_seed);
  const int u = batch.hyper.uniform_negatives;
  const std::vector<std::int32_t> target_negatives = uniform_offsets(rng, batch.rhs.rows, u);
  const std::vector<std::int32_t> source_negatives = uniform_offsets(rng, batch.lhs.rows, u);
  return {chunk, corrupt_side(batch, chunk, true, target_negatives),
          corrupt_side(batch, chunk, false, source_negatives)};
}

// Adds one side's gradients into the batch's: its query rows, the relations, its candidate rows.
void accumulate(Batch& batch, std::span<const Triple> chunk, const SideGradient& side) {
  const int d = batch.lhs.dimension;
  const float sign = side.corrupt_target ? 1.0f : -1.0f;
  RowGradients& own_gradient = side.corrupt_target ? batch.lhs_gradient : batch.rhs_gradient;
  RowGradients& other_gradient = side.corrupt_target ? batch.rhs_gradient : batch.lhs_gradient;
  for (std::size_t i = 0; i < side.own.size(); ++i) {
    const float* g = side.query_gradient.data() + static_cast<std::ptrdiff_t>(i) * d;
    own_gradient.add(side.own[i], g);
    if (!batch.relations.empty()) {
      float* rg =
          batch.relation_gradient.data() + static_cast<std::ptrdiff_t>(chunk[i].relation) * d;
      for (int j = 0; j < d; ++j) rg[j] += sign * g[j];
    }
  }
  for (std::size_t n = 0; n < side.candidates.size(); ++n) {
    other_gradient.add(side.candidates[n],
                       side.candidate_gradient.data() + static_cast<std::ptrdiff_t>(n) * d);
  }
}

// One batch: its chunks' gradients computed at once on OpenMP threads (they read the parameters
// as they were before the batch), then added in chunk order, so the sums, and the update, are the
// same for any number of threads.
double train_batch(Batch& batch, std::span<const Triple> edges, std::uint64_t seed,
                   std::size_t batch_index) {
  const auto chunk_size = static_cast<std::size_t>(batch.hyper.batch_negatives);
  const std::size_t num_chunks = (edges.size() + chunk_size - 1) / chunk_size;
  std::vector<ChunkGradient> chunks(num_chunks);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t k = 0; k < num_chunks; ++k) {
    const std::span<const Triple> chunk =
        edges.subspan(k * chunk_size, std::min(chunk_size, edges.size() - k * chunk_size));
    chunks[k] = chunk_gradient(batch, chunk, hash_mix(seed, 2, batch_index, k));
  }
  double loss = 0;
  for (const ChunkGradient& chunk : chunks) {
    accumulate(batch, chunk.chunk, chunk.target_side);
    accumulate(batch, chunk.chunk, chunk.source_side);
    loss += chunk.target_side.loss + chunk.source_side.loss;
  }
  return loss;
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
                         std::uint64_t seed, const std::function<void()>& between_batches) {
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
    stats.loss += train_batch(batch, batch_edges, seed, b);
    lhs_gradient.step(lhs, hyper.learning_rate);
    if (&rhs != &lhs) rhs_gradient.step(rhs, hyper.learning_rate);
    if (!relations.empty()) step_relations(relations, relation_gradient, hyper.learning_rate);
    if (between_batches) between_batches();
  }
  stats.edges = static_cast<std::int64_t>(edges.size());
  return stats;
}

}  // namespace gnnbed
