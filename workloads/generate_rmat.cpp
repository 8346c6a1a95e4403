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
  require(params.num_communities >= 0 &&
              params.num_communities <= std::max<std::int64_t>(params.num_nodes, 1),
          "rmat.num_communities",
          "must lie in [0, number of nodes], got " + std::to_string(params.num_communities));
  if (params.num_communities <= 1) return;
  require(std::isfinite(params.edge_homophily) && params.edge_homophily >= 0 &&
              params.edge_homophily <= 1.0,
          "rmat.edge_homophily",
          "is a share of the edges and must lie in [0, 1], got " +
              std::to_string(params.edge_homophily));
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

enum class Placement { as_drawn, inside, outside };

// One R-MAT edge as a key of its two (permuted) ends. Communities are residues modulo their
// count in R-MAT's index space (before the permutation of the ids), so each holds every part of
// the recursive order and the same mix of degrees.
class EdgeDraw {
 public:
  explicit EdgeDraw(const RmatParams& params)
      : num_nodes_(static_cast<std::uint64_t>(params.num_nodes)),
        levels_(params.num_nodes <= 1 ? 0
                                      : static_cast<int>(std::bit_width(
                                            static_cast<std::uint64_t>(params.num_nodes - 1)))),
        permutation_(params.num_nodes, hash_mix(params.seed, kPermutationStream)),
        quadrant_(thresholds(params)),
        communities_(static_cast<std::uint64_t>(std::max(params.num_communities, 1))) {}

  // kNoEdge when every attempt lands outside [0, n) or on a self loop.
  std::uint64_t key(Draws16& draws, Placement placement) const {
    for (std::uint64_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
      std::uint64_t row = 0;
      std::uint64_t column = 0;
      draws.skip_to_next_word();
      for (int level = 0; level < levels_; ++level) {
        const std::uint64_t draw = draws.next();
        // Branch-free: the quadrant is unpredictable, and mispredictions dominated the cost.
        const auto past_a = static_cast<std::uint64_t>(draw >= quadrant_.a);
        const auto lower = static_cast<std::uint64_t>(draw >= quadrant_.ab);
        const auto right =
            (past_a & (lower ^ 1)) | static_cast<std::uint64_t>(draw >= quadrant_.abc);
        row = (row << 1) | lower;
        column = (column << 1) | right;
      }
      if (row >= num_nodes_ || column >= num_nodes_) continue;
      if (placement != Placement::as_drawn)
        column = placed(row, column, placement == Placement::inside, draws.next());
      if (row == column) continue;
      return detail::undirected_key(static_cast<NodeId>(permutation_(row)),
                                    static_cast<NodeId>(permutation_(column)));
    }
    return detail::kNoEdge;
  }

 private:
  // `column` moved, within its block of `communities_` indices (about the same place in R-MAT's
  // order, so about the same expected degree), into the community of `row` or out of it: R-MAT
  // correlates the low bits of row and column, so an edge left where it was drawn would join one
  // community more often than 1 in communities_.
  std::uint64_t placed(std::uint64_t row, std::uint64_t column, bool inside,
                       std::uint64_t draw) const {
    std::uint64_t residue = row % communities_;
    if (!inside) {
      if (column % communities_ != residue) return column;
      residue = (residue + 1 + draw % (communities_ - 1)) % communities_;
    }
    const std::uint64_t moved = column - column % communities_ + residue;
    // The last block may be partial: its missing residues are borrowed from the block before.
    return moved < num_nodes_ ? moved : moved - communities_;
  }

  std::uint64_t num_nodes_;
  int levels_;
  IdPermutation permutation_;
  QuadrantThresholds quadrant_;
  std::uint64_t communities_;
};

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
  const EdgeDraw edge_draw(params);
  // Edge streams by round and candidate, and the seed that picks among surplus candidates.
  const std::uint64_t edge_seed = hash_mix(params.seed, kEdgeStream);
  const std::uint64_t trim_seed = hash_mix(params.seed, kTrimStream);
  auto sample = [&](std::int64_t count, std::uint64_t part, Placement placement,
                    const char* field) {
    // Part 0 keeps the seeds as they were before communities existed, and with them the graphs.
    const std::uint64_t stream = part == 0 ? edge_seed : hash_mix(edge_seed, part);
    auto candidate = [&](std::uint64_t round, std::uint64_t index) {
      // A SplitMix64 stream per candidate; each output gives four 16-bit draws.
      Draws16 draws(hash_mix(stream, round, index));
      return edge_draw.key(draws, placement);
    };
    return detail::sample_distinct_edges(params.num_nodes, count,
                                         part == 0 ? trim_seed : hash_mix(trim_seed, part), field,
                                         candidate);
  };
  if (params.num_communities <= 1) {
    return detail::graph_from_keys(
        params.num_nodes,
        sample(params.num_undirected_edges, 0, Placement::as_drawn, "rmat.num_undirected_edges"),
        "rmat");
  }
  // Edges inside and outside the communities are disjoint sets drawn apart, so that exactly the
  // asked share lies inside however many duplicates either draw rejects.
  const auto inside = static_cast<std::int64_t>(
      std::llround(params.edge_homophily * static_cast<double>(params.num_undirected_edges)));
  std::vector<std::uint64_t> keys = sample(inside, 1, Placement::inside, "rmat.edge_homophily");
  const std::vector<std::uint64_t> outside = sample(
      params.num_undirected_edges - inside, 2, Placement::outside, "rmat.num_undirected_edges");
  const auto middle = static_cast<std::ptrdiff_t>(keys.size());
  keys.insert(keys.end(), outside.begin(), outside.end());
  std::inplace_merge(keys.begin(), keys.begin() + middle, keys.end());
  return detail::graph_from_keys(params.num_nodes, std::move(keys), "rmat");
}

std::vector<std::int32_t> rmat_communities(const RmatParams& params) {
  validate(params);
  std::vector<std::int32_t> community(static_cast<std::size_t>(params.num_nodes), 0);
  if (params.num_communities <= 1) return community;
  const IdPermutation permutation(params.num_nodes, hash_mix(params.seed, kPermutationStream));
  const auto count = static_cast<std::uint64_t>(params.num_communities);
#pragma omp parallel for schedule(static)
  for (std::int64_t index = 0; index < params.num_nodes; ++index) {
    const auto r_mat_index = static_cast<std::uint64_t>(index);
    community[permutation(r_mat_index)] = static_cast<std::int32_t>(r_mat_index % count);
  }
  return community;
}

}  // namespace gnnbed
