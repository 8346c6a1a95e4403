#include "workloads/dataset.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

void Dataset::validate(const std::string& origin) const {
  const std::int64_t n = num_nodes();
  if (features && features->num_nodes() != n) {
    throw InputError(origin, 0, "features",
                     std::to_string(features->num_nodes()) + " feature rows for " +
                         std::to_string(n) + " nodes");
  }
  if (!labels.empty()) {
    if (static_cast<std::int64_t>(labels.size()) != n) {
      throw InputError(
          origin, 0, "labels",
          std::to_string(labels.size()) + " labels for " + std::to_string(n) + " nodes");
    }
    for (std::size_t v = 0; v < labels.size(); ++v) {
      if (labels[v] < -1 || labels[v] >= num_classes) {
        throw InputError(origin, 0, "labels",
                         "node " + std::to_string(v) + " has label " + std::to_string(labels[v]) +
                             " outside [-1, " + std::to_string(num_classes) + ")");
      }
    }
  }
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  const std::pair<const char*, const std::vector<NodeId>*> parts[] = {
      {"train", &split.train}, {"val", &split.val}, {"test", &split.test}};
  for (const auto& [part_name, ids] : parts) {
    const std::string field = std::string("split.") + part_name;
    for (const NodeId v : *ids) {
      if (v < 0 || v >= n) {
        throw InputError(
            origin, 0, field,
            "node id " + std::to_string(v) + " outside [0, " + std::to_string(n) + ")");
      }
      if (seen[static_cast<std::size_t>(v)] != 0) {
        throw InputError(origin, 0, field, "node " + std::to_string(v) + " is listed twice");
      }
      seen[static_cast<std::size_t>(v)] = 1;
      if (labels.empty() || labels[static_cast<std::size_t>(v)] < 0) {
        throw InputError(origin, 0, field, "node " + std::to_string(v) + " has no label");
      }
    }
  }
}

nlohmann::json Dataset::summary() const {
  return {{"name", name},
          {"num_nodes", num_nodes()},
          {"num_edges", graph.num_edges()},
          {"graph", graph.describe_storage()},
          {"feature_dim", feature_dim()},
          {"features", features ? features->describe() : nlohmann::json(nullptr)},
          {"num_classes", num_classes},
          {"num_train", split.train.size()},
          {"num_val", split.val.size()},
          {"num_test", split.test.size()}};
}

Split random_split(std::span<const std::int32_t> labels, std::int64_t num_train,
                   std::int64_t num_val, std::int64_t num_test, std::uint64_t seed) {
  std::vector<NodeId> labelled;
  labelled.reserve(labels.size());  // growing it by doubling copied 100 M-node lists repeatedly
  for (std::size_t v = 0; v < labels.size(); ++v) {
    if (labels[v] >= 0) labelled.push_back(static_cast<NodeId>(v));
  }
  if (num_train < 0 || num_val < 0 || num_test < 0 ||
      num_train + num_val + num_test > static_cast<std::int64_t>(labelled.size())) {
    throw ConfigError("split", "asks for " + std::to_string(num_train) + "/" +
                                   std::to_string(num_val) + "/" + std::to_string(num_test) +
                                   " train/val/test nodes but only " +
                                   std::to_string(labelled.size()) + " nodes are labelled");
  }
  Rng rng(seed);
  const auto wanted = static_cast<std::size_t>(num_train + num_val + num_test);
  // Partial Fisher-Yates: only the chosen prefix is shuffled.
  for (std::size_t i = 0; i < wanted; ++i) {
    std::swap(labelled[i], labelled[i + rng.below(labelled.size() - i)]);
  }
  auto take = [&](std::size_t begin, std::int64_t count) {
    std::vector<NodeId> part(labelled.begin() + static_cast<std::ptrdiff_t>(begin),
                             labelled.begin() + static_cast<std::ptrdiff_t>(begin) + count);
    std::sort(part.begin(), part.end());
    return part;
  };
  Split split;
  split.train = take(0, num_train);
  split.val = take(static_cast<std::size_t>(num_train), num_val);
  split.test = take(static_cast<std::size_t>(num_train + num_val), num_test);
  return split;
}

}  // namespace gnnbed
