#include "workloads/partition.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {

// Defined in partition_metis.cpp, the only file that includes metis.h.
std::unique_ptr<Partitioner> make_metis_partitioner();

namespace {

void check_num_parts(int num_parts) {
  require(num_parts >= 1, "num_parts", "must be at least 1, got " + std::to_string(num_parts));
}

void check_num_nodes(std::int64_t num_nodes) {
  require(num_nodes >= 0 && num_nodes <= std::numeric_limits<NodeId>::max(), "num_nodes",
          std::to_string(num_nodes) + " nodes do not fit 32-bit node ids");
}

// P3's random hash partition: nothing to compute, the owner is a hash of the id.
class HashPartitioner final : public Partitioner {
 public:
  std::string name() const override { return "hash"; }
  NodePartition partition(const Graph& graph, int num_parts, std::uint64_t seed) const override {
    return NodePartition::hashed(graph.num_nodes(), num_parts, seed);
  }
};

// ROC's public code: part p owns the p-th of num_parts equal ranges of consecutive ids.
class ContiguousPartitioner final : public Partitioner {
 public:
  std::string name() const override { return "contiguous"; }
  NodePartition partition(const Graph& graph, int num_parts,
                          std::uint64_t /*seed*/) const override {
    check_num_parts(num_parts);
    const std::int64_t n = graph.num_nodes();
    std::vector<std::int32_t> owners(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) {
      owners[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(v * num_parts / n);
    }
    return NodePartition::explicit_owners(num_parts, std::move(owners));
  }
};

struct PartitionerEntry {
  std::string_view name;
  std::unique_ptr<Partitioner> (*make)();
};

constexpr std::array<PartitionerEntry, 3> kPartitioners = {{
    {"hash", [] { return std::unique_ptr<Partitioner>(std::make_unique<HashPartitioner>()); }},
    {"metis", make_metis_partitioner},
    {"contiguous",
     [] { return std::unique_ptr<Partitioner>(std::make_unique<ContiguousPartitioner>()); }},
}};

}  // namespace

NodePartition NodePartition::hashed(std::int64_t num_nodes, int num_parts, std::uint64_t seed) {
  check_num_nodes(num_nodes);
  check_num_parts(num_parts);
  NodePartition partition;
  partition.num_parts_ = num_parts;
  partition.num_nodes_ = num_nodes;
  partition.hash_seed_ = seed;
  return partition;
}

NodePartition NodePartition::explicit_owners(int num_parts, std::vector<std::int32_t> owners) {
  check_num_parts(num_parts);
  check_num_nodes(static_cast<std::int64_t>(owners.size()));
  const auto size = static_cast<std::int64_t>(owners.size());
  std::int64_t first_bad = size;
#pragma omp parallel for reduction(min : first_bad) schedule(static)
  for (std::int64_t v = 0; v < size; ++v) {
    const std::int32_t owner = owners[static_cast<std::size_t>(v)];
    if (owner < 0 || owner >= num_parts) first_bad = std::min(first_bad, v);
  }
  if (first_bad < size) {
    throw ConfigError("partition.owners",
                      "node " + std::to_string(first_bad) + " has owner " +
                          std::to_string(owners[static_cast<std::size_t>(first_bad)]) +
                          " outside [0, " + std::to_string(num_parts) + ")");
  }
  NodePartition partition;
  partition.num_parts_ = num_parts;
  partition.num_nodes_ = size;
  partition.owners_ = std::move(owners);
  return partition;
}

std::vector<NodeId> NodePartition::nodes_of(int part) const {
  require(part >= 0 && part < num_parts_, "part",
          std::to_string(part) + " is outside [0, " + std::to_string(num_parts_) + ")");
  std::vector<NodeId> nodes;
  for (std::int64_t v = 0; v < num_nodes_; ++v) {
    if (owner(static_cast<NodeId>(v)) == part) nodes.push_back(static_cast<NodeId>(v));
  }
  return nodes;
}

std::unique_ptr<Partitioner> make_partitioner(std::string_view name) {
  for (const PartitionerEntry& entry : kPartitioners) {
    if (entry.name == name) return entry.make();
  }
  std::string known;
  for (const PartitionerEntry& entry : kPartitioners) {
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw ConfigError("partitioner",
                    "unknown partitioner '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<std::string> partitioner_names() {
  std::vector<std::string> names;
  for (const PartitionerEntry& entry : kPartitioners) names.emplace_back(entry.name);
  return names;
}

PartitionResult run_partitioner(const Partitioner& partitioner, const Graph& graph, int num_parts,
                                std::uint64_t seed) {
  const Stopwatch stopwatch;
  NodePartition partition = partitioner.partition(graph, num_parts, seed);
  const double seconds = stopwatch.seconds();
  PartitionReport report = evaluate_partition(graph, partition, partitioner.name(), seconds);
  return {std::move(partition), std::move(report)};
}

}  // namespace gnnbed
