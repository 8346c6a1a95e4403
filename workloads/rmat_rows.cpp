#include "workloads/rmat_rows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/poisson.hpp"
#include "workloads/common/random.hpp"
#include "workloads/generators.hpp"

namespace gnnbed {
namespace {

// Tags that derive independent streams from the one user seed.
constexpr std::uint64_t kPermutationStream = 0x9e2d;
constexpr std::uint64_t kDegreeStream = 0xde6;
constexpr std::uint64_t kEdgeStream = 0x2a71;

// A column outside [0, n), or equal to the row (a self loop), is redrawn from the next stretch
// of the edge's stream; after this many attempts the edge keeps a self loop (the only column
// left when n = 1; otherwise about as likely as (a / (a+b))^(16 L)).
constexpr int kMaxAttempts = 16;

// Nodes per parallel chunk of the offsets pass, and per progress report.
constexpr std::int64_t kNodesPerChunk = std::int64_t{1} << 20;

void validate(const RmatRowsParams& params) {
  check_node_count(params.num_nodes, "rmat-rows");
  require(params.num_edges >= 0, "rmat.num_edges",
          "is negative (" + std::to_string(params.num_edges) + ")");
  require(params.num_nodes > 0 || params.num_edges == 0, "rmat.num_edges",
          "a graph without nodes has no edges, got " + std::to_string(params.num_edges));
  check_rmat_probabilities(params.a, params.b, params.c);
}

// Sum over the rows r in [0, n) of p0^(zero bits of r) p1^(one bits of r), L bits per row: the
// probability that an R-MAT row falls in range. Rows below n that share n's bits above a one bit
// i of n and have a zero there leave their i lower bits free, which sum to (p0 + p1)^i = 1.
double in_range_row_mass(std::int64_t n, int levels, double p0, double p1) {
  double mass = 0;
  int ones_above = 0;
  for (int i = levels - 1; i >= 0; --i) {
    if (((static_cast<std::uint64_t>(n) >> i) & 1) == 0) continue;
    mass += std::pow(p1, ones_above) * std::pow(p0, levels - i - ones_above);
    ++ones_above;
  }
  // n = 2^L exactly has its one bit above the L levels: every row is in range.
  if ((static_cast<std::uint64_t>(n) >> levels) != 0) mass = 1.0;
  return mass;
}

std::uint64_t fixed_point(double p) {
  return static_cast<std::uint64_t>(std::round(std::clamp(p, 0.0, 1.0) * 65536.0));
}

}  // namespace

RmatRowsGenerator::RmatRowsGenerator(const RmatRowsParams& params)
    : params_(params),
      levels_(params.num_nodes <= 1 ? 0
                                    : static_cast<int>(std::bit_width(
                                          static_cast<std::uint64_t>(params.num_nodes - 1)))),
      permutation_(params.num_nodes, hash_mix(params.seed, kPermutationStream)) {
  validate(params);
  const double p0 = std::max(0.0, params.a + params.b);
  const double p1 = std::max(0.0, 1.0 - p0);
  const double mass = in_range_row_mass(params.num_nodes, levels_, p0, p1);
  require(params.num_edges == 0 || mass > 0, "rmat.a",
          "with a + b = " + std::to_string(p0) + " no R-MAT row falls below " +
              std::to_string(params.num_nodes) + " nodes");
  mean_degree_by_one_bits_.resize(static_cast<std::size_t>(levels_) + 1);
  for (int k = 0; k <= levels_; ++k) {
    mean_degree_by_one_bits_[static_cast<std::size_t>(k)] =
        params.num_edges == 0 ? 0.0
                              : static_cast<double>(params.num_edges) * std::pow(p0, levels_ - k) *
                                    std::pow(p1, k) / mass;
  }
  const double d = std::max(0.0, 1.0 - params.a - params.b - params.c);
  column_one_threshold_[0] = p0 > 0 ? fixed_point(params.b / p0) : 0;
  column_one_threshold_[1] = p1 > 0 ? fixed_point(d / p1) : 0;
  degree_seed_ = hash_mix(params.seed, kDegreeStream);
  edge_seed_ = hash_mix(params.seed, kEdgeStream);
}

double RmatRowsGenerator::expected_in_degree(int one_bits) const {
  return mean_degree_by_one_bits_.at(static_cast<std::size_t>(one_bits));
}

std::int64_t RmatRowsGenerator::in_degree(NodeId v) const {
  const std::uint64_t row = permutation_.inverse(static_cast<std::uint64_t>(v));
  const double mean = mean_degree_by_one_bits_[static_cast<std::size_t>(std::popcount(row))];
  return poisson(mean, hash_mix(degree_seed_, static_cast<std::uint64_t>(v)));
}

NodeId RmatRowsGenerator::column_for_row(std::uint64_t row, std::uint64_t stream) const {
  const auto num_nodes = static_cast<std::uint64_t>(params_.num_nodes);
  Draws16 draws(stream);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    std::uint64_t column = 0;
    draws.skip_to_next_word();
    for (int level = 0; level < levels_; ++level) {
      const std::uint64_t draw = draws.next();
      const std::uint64_t row_bit = (row >> (levels_ - 1 - level)) & 1;
      // Branch-free: the bit is unpredictable, and mispredictions would dominate.
      column = (column << 1) | static_cast<std::uint64_t>(draw < column_one_threshold_[row_bit]);
    }
    if (column < num_nodes && column != row) return static_cast<NodeId>(permutation_(column));
  }
  return static_cast<NodeId>(permutation_(row));
}

NodeId RmatRowsGenerator::source(NodeId v, std::int64_t j) const {
  const std::uint64_t row = permutation_.inverse(static_cast<std::uint64_t>(v));
  return column_for_row(
      row, hash_mix(edge_seed_, static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(j)));
}

void RmatRowsGenerator::sources_at(NodeId v, EdgeIndex row_begin,
                                   std::span<const EdgeIndex> positions, NodeId* out) const {
  const std::uint64_t row = permutation_.inverse(static_cast<std::uint64_t>(v));
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const auto j = static_cast<std::uint64_t>(positions[i] - row_begin);
    out[i] = column_for_row(row, hash_mix(edge_seed_, static_cast<std::uint64_t>(v), j));
  }
}

nlohmann::json RmatRowsGenerator::describe() const {
  return {{"model", "rmat-rows"},
          {"num_nodes", params_.num_nodes},
          {"expected_edges", params_.num_edges},
          {"a", params_.a},
          {"b", params_.b},
          {"c", params_.c},
          {"seed", params_.seed}};
}

std::vector<EdgeIndex> rmat_rows_offsets(const RmatRowsGenerator& generator,
                                         const ProgressCallback& progress) {
  const std::int64_t n = generator.params().num_nodes;
  std::vector<EdgeIndex> offsets(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t first = 0; first < n; first += kNodesPerChunk) {
    const std::int64_t last = std::min(n, first + kNodesPerChunk);
#pragma omp parallel for schedule(static)
    for (std::int64_t v = first; v < last; ++v) {
      offsets[static_cast<std::size_t>(v) + 1] = generator.in_degree(static_cast<NodeId>(v));
    }
    if (progress) progress(last, n);
  }
  std::inclusive_scan(offsets.begin(), offsets.end(), offsets.begin());
  return offsets;
}

Graph implicit_rmat_rows_graph(const RmatRowsParams& params, const ProgressCallback& progress) {
  auto generator = std::make_shared<const RmatRowsGenerator>(params);
  SharedArray<EdgeIndex> offsets(rmat_rows_offsets(*generator, progress));
  return Graph(std::move(offsets), std::move(generator), "rmat-rows");
}

Graph materialized_rmat_rows_graph(const RmatRowsParams& params) {
  const RmatRowsGenerator generator(params);
  std::vector<EdgeIndex> offsets = rmat_rows_offsets(generator);
  std::vector<NodeId> sources(static_cast<std::size_t>(offsets.back()));
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < params.num_nodes; ++v) {
    const auto row = static_cast<std::size_t>(v);
    for (EdgeIndex e = offsets[row]; e < offsets[row + 1]; ++e) {
      sources[static_cast<std::size_t>(e)] =
          generator.source(static_cast<NodeId>(v), e - offsets[row]);
    }
  }
  return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)), "rmat-rows");
}

}  // namespace gnnbed
