#pragma once
// Partitioning. A NodePartition says which of `num_parts` ranks owns each node; edges live with
// their destination (edge-cut), so a rank holds the in-edges of the nodes it owns. Features may
// instead be split along the feature dimension (P3), which FeatureColumnSplit describes.
//
// Partitioners are looked up by name (make_partitioner); each reports edge cut, balance,
// replication and its running time. Vertex-cut, GRID and 3D partitioners, which assign edges
// rather than nodes, will add an explicit edge placement beside the node owners.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/common/random.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {

class NodePartition {
 public:
  // Random hash partition: the owner is computed from the id (nothing stored), as in P3.
  static NodePartition hashed(std::int64_t num_nodes, int num_parts, std::uint64_t seed);
  // Explicit owners, one per node, each in [0, num_parts).
  static NodePartition explicit_owners(int num_parts, std::vector<std::int32_t> owners);

  int num_parts() const { return num_parts_; }
  std::int64_t num_nodes() const { return num_nodes_; }
  bool is_hashed() const { return owners_.empty(); }

  int owner(NodeId v) const {
    if (owners_.empty()) {
      return static_cast<int>(hash_mix(hash_seed_, static_cast<std::uint64_t>(v)) %
                              static_cast<std::uint64_t>(num_parts_));
    }
    return owners_[static_cast<std::size_t>(v)];
  }

  // The nodes owned by `part`, in increasing id order.
  std::vector<NodeId> nodes_of(int part) const;

 private:
  int num_parts_ = 1;
  std::int64_t num_nodes_ = 0;
  std::uint64_t hash_seed_ = 0;
  std::vector<std::int32_t> owners_;
};

// How good a node partition is.
struct PartitionReport {
  std::string method;
  int num_parts = 0;
  std::int64_t edge_cut = 0;      // CSR entries whose source and destination owners differ
  double edge_cut_fraction = 0;   // edge_cut / num_edges
  double node_balance = 0;        // max nodes per part / mean
  double edge_balance = 0;        // max in-edges per part / mean
  double replication_factor = 0;  // mean copies of a node: its owner plus every other part
                                  // that owns one of its out-neighbours (a halo copy)
  double seconds = 0;             // time the partitioner took
  std::vector<std::int64_t> nodes_per_part;
  std::vector<std::int64_t> edges_per_part;

  nlohmann::json to_json() const;
};

PartitionReport evaluate_partition(const Graph& graph, const NodePartition& partition,
                                   std::string method, double seconds);

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  virtual std::string name() const = 0;
  virtual NodePartition partition(const Graph& graph, int num_parts, std::uint64_t seed) const = 0;
};

// Known names: "hash", "metis", "contiguous" (equal ranges of consecutive ids, as ROC's code
// splits a graph). Throws ConfigError listing them for any other name.
std::unique_ptr<Partitioner> make_partitioner(std::string_view name);
std::vector<std::string> partitioner_names();

// Runs the partitioner, times it and evaluates the result.
struct PartitionResult {
  NodePartition partition;
  PartitionReport report;
};
PartitionResult run_partitioner(const Partitioner& partitioner, const Graph& graph, int num_parts,
                                std::uint64_t seed);

// P3's feature-dimension split: part p holds columns [begin(p), end(p)) of every node's features;
// the first dim % num_parts parts hold one column more. With more parts than columns, the parts
// from dim on hold none (their ranks take no share of P3's first layer).
class FeatureColumnSplit {
 public:
  FeatureColumnSplit(int dim, int num_parts);
  int num_parts() const { return num_parts_; }
  int dim() const { return dim_; }
  int begin(int part) const;
  int end(int part) const;
  int width(int part) const { return end(part) - begin(part); }
  // Bytes of float32 features part p holds for `num_nodes` nodes.
  std::int64_t bytes(int part, std::int64_t num_nodes) const;
  nlohmann::json to_json(std::int64_t num_nodes) const;

 private:
  int dim_;
  int num_parts_;
};

}  // namespace gnnbed
