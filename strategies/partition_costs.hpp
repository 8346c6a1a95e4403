#pragma once
// ROC's cost model of a partition [ROC: Jia et al., MLSys 2020; P3 paper, section 6]: the time a
// rank spends on its part of the graph in an epoch is linear in the part's shape,
//   seconds = seconds_per_vertex * vertices + seconds_per_edge * edges
//             + seconds_per_remote_neighbour * remote_neighbours,
// with the coefficients refitted from measured parts (non-negative least squares on the relative
// error, as calibration fits op costs, held weakly to the default model's proportions where the
// parts measured are too alike to tell the terms apart). ROC refits online and moves data between
// epochs; gnnbed keeps one partition per run (plans and shards are cut for it), so the loop closes
// across runs: every roc result records the shape and measured time of each rank's part after the
// samples of the result `distribution.partition_costs` names (run_experiment's or simulate's,
// whatever its partitioner), and a cost-balanced run fits the samples of the result it names. Runs
// on other partitioners or rank counts add parts of other shapes, which the fit needs to resolve
// the terms.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workloads/graph.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {

struct PartitionShape {
  std::int64_t vertices = 0;           // owned nodes
  std::int64_t edges = 0;              // their in-edges
  std::int64_t remote_neighbours = 0;  // distinct in-neighbours another part owns (the halo)

  bool operator==(const PartitionShape& other) const = default;
};

// Every part's shape.
std::vector<PartitionShape> partition_shapes(const Graph& graph, const NodePartition& partition);
// The shape of `part`, whose nodes are `owned`, from a structure holding at least their in-edges.
PartitionShape partition_shape(const Graph& structure, std::span<const NodeId> owned,
                               const NodePartition& partition, int part);

struct PartitionCostSample {
  std::string label;  // where it was measured
  PartitionShape shape;
  double seconds = 0;  // per epoch
};

struct PartitionCostModel {
  // Without measurements: a vertex and an edge weigh the same and the halo nothing (the usual
  // static balance of vertices + edges); fitted models replace all three.
  double seconds_per_vertex = 1;
  double seconds_per_edge = 1;
  double seconds_per_remote_neighbour = 0;
  int samples = 0;  // fitted on this many (0: the default)

  double seconds(const PartitionShape& shape) const;
  nlohmann::json to_json() const;
};

// Throws Error when there are no samples, a time is not positive and finite, or no coefficient
// explains the times (every shape empty).
PartitionCostModel fit_partition_costs(std::span<const PartitionCostSample> samples);

// The samples recorded in a result file: run_experiment's ("partition_costs" at the top level) or
// simulate's (in every point's result). Throws InputError naming the file when it holds none.
std::vector<PartitionCostSample> read_partition_cost_samples(const std::filesystem::path& path);

// What a result records: every sample so far (`earlier`, then this run's `measured`), for the next
// run to fit on, and the model the partition was cut with (cost-balanced only) with its
// prediction for this run's parts when it was fitted.
nlohmann::json partition_costs_json(const std::optional<PartitionCostModel>& model,
                                    std::span<const PartitionCostSample> earlier,
                                    std::span<const PartitionCostSample> measured);

}  // namespace gnnbed
