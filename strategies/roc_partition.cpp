#include "strategies/roc_partition.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr const char* kCostBalanced = "cost-balanced";
// Bisection steps on the bound: 2^-25 of the starting interval, whose ends are within a factor of
// about the number of parts of each other.
constexpr int kBisectionSteps = 25;

// The predicted time of a range [begin, end) of node ids that grows one node at a time; the last
// node added can be taken back.
class GrowingRange {
 public:
  GrowingRange(const Graph& graph, const PartitionCostModel& model)
      : graph_(graph), model_(model), counted_(static_cast<std::size_t>(graph.num_nodes()), -1) {}

  void start(NodeId begin) {
    ++range_;
    begin_ = begin;
    end_ = begin;
    shape_ = {};
  }

  void extend() {
    const NodeId v = end_++;
    // v was a halo node of the range until now.
    last_was_remote_ = counted_[static_cast<std::size_t>(v)] == range_;
    if (last_was_remote_) --shape_.remote_neighbours;
    last_new_remote_.clear();
    const auto neighbours = graph_.in_neighbors(v);
    for (const NodeId u : neighbours) {
      if (u >= begin_ && u <= v) continue;
      int& mark = counted_[static_cast<std::size_t>(u)];
      if (mark == range_) continue;
      mark = range_;
      last_new_remote_.push_back(u);
    }
    shape_.remote_neighbours += static_cast<std::int64_t>(last_new_remote_.size());
    shape_.edges += static_cast<std::int64_t>(neighbours.size());
    ++shape_.vertices;
  }

  // Undoes the last extend().
  void retract() {
    const NodeId v = --end_;
    for (const NodeId u : last_new_remote_) counted_[static_cast<std::size_t>(u)] = -1;
    shape_.remote_neighbours -= static_cast<std::int64_t>(last_new_remote_.size());
    last_new_remote_.clear();
    if (last_was_remote_) ++shape_.remote_neighbours;
    shape_.edges -= graph_.in_degree(v);
    --shape_.vertices;
  }

  NodeId end() const { return end_; }
  double seconds() const { return model_.seconds(shape_); }

 private:
  const Graph& graph_;
  const PartitionCostModel& model_;
  std::vector<int> counted_;  // == range_: counted as a halo node of the current range
  int range_ = -1;
  NodeId begin_ = 0;
  NodeId end_ = 0;
  PartitionShape shape_;
  std::vector<NodeId> last_new_remote_;
  bool last_was_remote_ = false;
};

// The ranges' ends when no range may exceed `bound`, or nothing when the sweep cannot keep every
// range within it. Every range keeps at least one node, and leaves one for each later range.
std::optional<std::vector<NodeId>> sweep(GrowingRange& range, NodeId num_nodes, int num_parts,
                                         double bound) {
  std::vector<NodeId> ends;
  NodeId begin = 0;
  for (int p = 0; p < num_parts; ++p) {
    const NodeId limit = p + 1 == num_parts ? num_nodes : num_nodes - (num_parts - 1 - p);
    range.start(begin);
    range.extend();
    while (range.end() < limit) {
      range.extend();
      if (range.seconds() > bound && p + 1 < num_parts) {
        range.retract();
        break;
      }
    }
    if (range.seconds() > bound) return std::nullopt;
    ends.push_back(range.end());
    begin = range.end();
  }
  return ends;
}

}  // namespace

NodePartition cost_balanced_partition(const Graph& graph, int num_parts,
                                      const PartitionCostModel& model) {
  const std::int64_t n = graph.num_nodes();
  require(num_parts >= 1 && num_parts <= n, "num_parts",
          std::to_string(num_parts) + " parts for " + std::to_string(n) +
              " nodes: every part needs a node");
  require(model.seconds_per_vertex >= 0 && model.seconds_per_edge >= 0 &&
              model.seconds_per_remote_neighbour >= 0 && model.seconds({1, 1, 1}) > 0,
          "distribution.partition_costs",
          "the cost model must weigh vertices, edges or remote neighbours (non-negatively)");
  const auto num_nodes = static_cast<NodeId>(n);
  GrowingRange range(graph, model);
  // Any range costs at most this (its halo has fewer than n nodes), so the bound is feasible.
  double high = model.seconds({n, graph.num_edges(), n});
  // The largest part costs at least the mean part without its halo.
  double low = model.seconds({n, graph.num_edges(), 0}) / num_parts;
  std::vector<NodeId> ends = *sweep(range, num_nodes, num_parts, high);
  for (int step = 0; step < kBisectionSteps; ++step) {
    const double middle = (low + high) / 2;
    if (auto found = sweep(range, num_nodes, num_parts, middle)) {
      high = middle;
      ends = std::move(*found);
    } else {
      low = middle;
    }
  }
  std::vector<std::int32_t> owners(static_cast<std::size_t>(n));
  NodeId begin = 0;
  for (int p = 0; p < num_parts; ++p) {
    const NodeId end = ends[static_cast<std::size_t>(p)];
    std::fill(owners.begin() + begin, owners.begin() + end, p);
    begin = end;
  }
  return NodePartition::explicit_owners(num_parts, std::move(owners));
}

std::vector<std::string> distribution_partitioner_names() {
  std::vector<std::string> names = partitioner_names();
  names.emplace_back(kCostBalanced);
  return names;
}

std::optional<PartitionCostModel> partition_cost_model(const DistributionConfig& distribution) {
  if (distribution.partitioner != kCostBalanced) return std::nullopt;
  if (distribution.partition_costs.empty()) return PartitionCostModel{};
  const std::vector<PartitionCostSample> samples =
      read_partition_cost_samples(distribution.partition_costs);
  try {
    return fit_partition_costs(samples);
  } catch (const Error& error) {
    throw ConfigError("distribution.partition_costs",
                      distribution.partition_costs + ": " + error.what());
  }
}

nlohmann::json recorded_partition_costs(const DistributionConfig& distribution,
                                        std::span<const PartitionCostSample> measured) {
  const std::optional<PartitionCostModel> model = partition_cost_model(distribution);
  std::vector<PartitionCostSample> earlier;
  if (!distribution.partition_costs.empty()) {
    earlier = read_partition_cost_samples(distribution.partition_costs);
  }
  return partition_costs_json(model, earlier, measured);
}

NodePartition partition_nodes(const DistributionConfig& distribution, const Graph& graph,
                              int num_parts) {
  if (const auto model = partition_cost_model(distribution)) {
    return cost_balanced_partition(graph, num_parts, *model);
  }
  return make_partitioner(distribution.partitioner)
      ->partition(graph, num_parts, distribution.partition_seed);
}

}  // namespace gnnbed
