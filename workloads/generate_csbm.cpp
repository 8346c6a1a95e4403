#include <algorithm>
#include <cmath>
#include <memory>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/distinct_edges.hpp"
#include "workloads/generators.hpp"

namespace gnnbed {
namespace {

// Tags that derive independent streams from the one user seed.
constexpr std::uint64_t kLabelStream = 0x1abe1;
constexpr std::uint64_t kEdgeStream = 0xed9e;
constexpr std::uint64_t kTrimStream = 0x71b3;
constexpr std::uint64_t kFeatureStream = 0xfea7;
constexpr std::uint64_t kSplitStream = 0x5b1d;

// A candidate that hits a self loop (or a class too small to pick from) is redrawn from the next
// attempt; after this many it is given up and a later round makes up for it.
constexpr std::uint64_t kMaxAttempts = 16;

void validate(const CsbmParams& params) {
  check_node_count(params.num_nodes, "csbm");
  require(std::isfinite(params.average_degree) && params.average_degree >= 0, "csbm.average_degree",
          "must be a finite number >= 0");
  require(params.num_classes >= 1, "csbm.num_classes",
          "must be at least 1, got " + std::to_string(params.num_classes));
  require(params.homophily >= 0 && params.homophily <= 1, "csbm.homophily",
          "must lie in [0, 1], got " + std::to_string(params.homophily));
  require(params.feature_dim >= 1, "csbm.feature_dim",
          "must be at least 1, got " + std::to_string(params.feature_dim));
  require(std::isfinite(params.feature_signal), "csbm.feature_signal", "must be finite");
  const std::pair<const char*, double> fractions[] = {
      {"csbm.train_fraction", params.train_fraction},
      {"csbm.val_fraction", params.val_fraction},
      {"csbm.test_fraction", params.test_fraction}};
  for (const auto& [field, fraction] : fractions) {
    require(fraction >= 0 && fraction <= 1, field,
            "must lie in [0, 1], got " + std::to_string(fraction));
  }
  require(params.train_fraction + params.val_fraction + params.test_fraction <= 1 + 1e-9,
          "csbm.test_fraction", "train + val + test fractions exceed 1");
}

}  // namespace

Dataset generate_csbm(const CsbmParams& params) {
  validate(params);
  const std::int64_t n = params.num_nodes;
  const auto num_edges =
      static_cast<std::int64_t>(std::llround(static_cast<double>(n) * params.average_degree / 2));
  std::vector<std::int32_t> labels =
      generate_labels(n, params.num_classes, hash_mix(params.seed, kLabelStream));

  // Nodes grouped by class (a counting sort), so that "a uniform node of class c" and "a uniform
  // node of another class than c" are each one index into a contiguous range.
  const auto classes = static_cast<std::size_t>(params.num_classes);
  std::vector<std::int64_t> class_begin(classes + 1, 0);
  for (const std::int32_t label : labels) ++class_begin[static_cast<std::size_t>(label) + 1];
  for (std::size_t c = 0; c < classes; ++c) class_begin[c + 1] += class_begin[c];
  std::vector<NodeId> by_class(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> cursor(class_begin.begin(), class_begin.end() - 1);
    for (std::size_t v = 0; v < labels.size(); ++v) {
      by_class[static_cast<std::size_t>(cursor[static_cast<std::size_t>(labels[v])]++)] =
          static_cast<NodeId>(v);
    }
  }

  const std::uint64_t edge_seed = hash_mix(params.seed, kEdgeStream);
  auto candidate = [&](std::uint64_t round, std::uint64_t index) -> std::uint64_t {
    for (std::uint64_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
      const std::uint64_t base = hash_mix(edge_seed, round, index, attempt);
      const auto u =
          static_cast<NodeId>(detail::bounded(splitmix64(base), static_cast<std::uint64_t>(n)));
      const auto label = static_cast<std::size_t>(labels[static_cast<std::size_t>(u)]);
      const std::int64_t begin = class_begin[label];
      const std::int64_t size = class_begin[label + 1] - begin;
      const bool same_class = unit_double(splitmix64(base + 1)) < params.homophily;
      const std::uint64_t pick_bits = splitmix64(base + 2);
      std::int64_t index_in_order = 0;
      if (same_class) {
        if (size < 2) continue;
        index_in_order = begin + static_cast<std::int64_t>(
                                     detail::bounded(pick_bits, static_cast<std::uint64_t>(size)));
      } else {
        const std::int64_t others = n - size;
        if (others == 0) continue;
        // The other classes are by_class[0, begin) followed by by_class[begin + size, n).
        const auto j = static_cast<std::int64_t>(
            detail::bounded(pick_bits, static_cast<std::uint64_t>(others)));
        index_in_order = j < begin ? j : j + size;
      }
      const NodeId v = by_class[static_cast<std::size_t>(index_in_order)];
      if (v == u) continue;
      return detail::undirected_key(u, v);
    }
    return detail::kNoEdge;
  };
  std::vector<std::uint64_t> keys = detail::sample_distinct_edges(
      n, num_edges, hash_mix(params.seed, kTrimStream), "csbm.average_degree", candidate);
  std::vector<NodeId>().swap(by_class);

  Dataset dataset;
  dataset.name = "csbm";
  dataset.graph = detail::graph_from_keys(n, std::move(keys), "csbm");
  dataset.num_classes = params.num_classes;
  dataset.labels = SharedArray(std::move(labels));
  dataset.features =
      std::make_shared<GeneratedFeatures>(params.feature_dim, dataset.labels, params.feature_signal,
                                          hash_mix(params.seed, kFeatureStream));
  // Rounded counts; rounding three fractions that sum to at most 1 can overshoot n by one or two,
  // which the later parts give back.
  auto count = [&](double fraction) {
    return static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(n)));
  };
  const std::int64_t num_train = std::min(count(params.train_fraction), n);
  const std::int64_t num_val = std::min(count(params.val_fraction), n - num_train);
  const std::int64_t num_test = std::min(count(params.test_fraction), n - num_train - num_val);
  dataset.split = random_split(dataset.labels.span(), num_train, num_val, num_test,
                               hash_mix(params.seed, kSplitStream));
  return dataset;
}

}  // namespace gnnbed
