#include <algorithm>
#include <bit>
#include <cmath>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/distinct_edges.hpp"
#include "workloads/generators.hpp"
#include "workloads/id_permutation.hpp"

namespace gnnbed {
namespace {

// Tags that derive independent streams from the one user seed.
constexpr std::uint64_t kEdgeStream = 0x2a71;
constexpr std::uint64_t kPermutationStream = 0x9e2d;
constexpr std::uint64_t kTrimStream = 0x71b3;

// A candidate that lands outside [0, num_nodes) or on a self loop is redrawn from the next
// attempt's hash; after this many it is given up (and a later round makes up for it).
constexpr std::uint64_t kMaxAttempts = 16;

void validate(const RmatParams& params) {
  check_node_count(params.num_nodes, "rmat");
  check_rmat_probabilities(params.a, params.b, params.c);
  require(params.num_undirected_edges >= 0, "rmat.num_undirected_edges",
          "is negative (" + std::to_string(params.num_undirected_edges) + ")");
}

// Quadrant thresholds in 16-bit fixed point (a draw d picks quadrant a when d < a, b when
// a <= d < a + b, ...): four levels per 64-bit hash, probabilities exact to 2^-16.
struct QuadrantThresholds {
  std::uint64_t a, ab, abc;
};

QuadrantThresholds thresholds(const RmatParams& params) {
  auto fixed = [](double p) {
    return static_cast<std::uint64_t>(std::round(std::clamp(p, 0.0, 1.0) * 65536.0));
  };
  return {fixed(params.a), fixed(params.a + params.b), fixed(params.a + params.b + params.c)};
}

}  // namespace

void check_rmat_probabilities(double a, double b, double c) {
  const double d = 1.0 - a - b - c;
  const std::pair<const char*, double> probabilities[] = {
      {"rmat.a", a}, {"rmat.b", b}, {"rmat.c", c}, {"rmat.d", d}};
  for (const auto& [field, p] : probabilities) {
    // A small tolerance lets d = 1 - a - b - c come out as -1e-17 without being an error.
    require(std::isfinite(p) && p >= -1e-12 && p <= 1.0, field,
            "R-MAT quadrant probability " + std::to_string(p) + " is outside [0, 1]" +
                (std::string(field) == "rmat.d" ? " (d = 1 - a - b - c)" : ""));
  }
}

std::vector<std::int32_t> generate_labels(std::int64_t num_nodes, int num_classes,
                                          std::uint64_t seed) {
  require(num_nodes >= 0, "num_nodes", "is negative (" + std::to_string(num_nodes) + ")");
  require(num_classes >= 1, "num_classes",
          "must be at least 1, got " + std::to_string(num_classes));
  std::vector<std::int32_t> labels(static_cast<std::size_t>(num_nodes));
  const auto classes = static_cast<std::uint64_t>(num_classes);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    labels[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(
        detail::bounded(hash_mix(seed, static_cast<std::uint64_t>(v)), classes));
  }
  return labels;
}

Graph generate_rmat(const RmatParams& params) {
  validate(params);
  const std::int64_t n = params.num_nodes;
  const int scale =
      n <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n - 1)));

  const IdPermutation permutation(n, hash_mix(params.seed, kPermutationStream));
  const QuadrantThresholds quadrant = thresholds(params);
  const std::uint64_t edge_seed = hash_mix(params.seed, kEdgeStream);
  const auto num_nodes = static_cast<std::uint64_t>(n);
  auto candidate = [&](std::uint64_t round, std::uint64_t index) -> std::uint64_t {
    // A SplitMix64 stream per candidate; each output gives four 16-bit draws, one per level.
    Draws16 draws(hash_mix(edge_seed, round, index));
    for (std::uint64_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
      std::uint64_t row = 0;
      std::uint64_t column = 0;
      draws.skip_to_next_word();
      for (int level = 0; level < scale; ++level) {
        const std::uint64_t draw = draws.next();
        // Branch-free: the quadrant is unpredictable, and mispredictions dominated the cost.
        const auto past_a = static_cast<std::uint64_t>(draw >= quadrant.a);
        const auto lower = static_cast<std::uint64_t>(draw >= quadrant.ab);
        const auto right =
            (past_a & (lower ^ 1)) | static_cast<std::uint64_t>(draw >= quadrant.abc);
        row = (row << 1) | lower;
        column = (column << 1) | right;
      }
      if (row >= num_nodes || column >= num_nodes || row == column) continue;
      return detail::undirected_key(static_cast<NodeId>(permutation(row)),
                                    static_cast<NodeId>(permutation(column)));
    }
    return detail::kNoEdge;
  };
  std::vector<std::uint64_t> keys = detail::sample_distinct_edges(
      n, params.num_undirected_edges, hash_mix(params.seed, kTrimStream),
      "rmat.num_undirected_edges", candidate);
  return detail::graph_from_keys(n, std::move(keys), "rmat");
}

}  // namespace gnnbed
