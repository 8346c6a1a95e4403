#pragma once
// ROC's partitioners: every part is a range of consecutive node ids. `contiguous` (workloads/
// partition.hpp) gives every range the same number of nodes, as ROC's public code does;
// `cost-balanced` places the boundaries so that the largest predicted part time under ROC's linear
// cost model (partition_costs.hpp) is as small as a greedy sweep can make it.
#include <optional>

#include "strategies/config/experiment_config.hpp"
#include "strategies/partition_costs.hpp"
#include "workloads/graph.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {

// Consecutive ranges, one per part, each non-empty (throws ConfigError when there are fewer nodes
// than parts or the model weighs nothing). A binary search on the bound T of the largest part's
// predicted time, each step a greedy sweep that ends a range just before it would exceed T; with a
// halo term the cost of a range is not monotone in its length, so the sweep is a heuristic, as
// ROC's is.
NodePartition cost_balanced_partition(const Graph& graph, int num_parts,
                                      const PartitionCostModel& model);

// The model `distribution` asks cost-balanced to use: fitted on the samples in
// distribution.partition_costs when it names a file, else the default; nothing for other
// partitioners.
std::optional<PartitionCostModel> partition_cost_model(const DistributionConfig& distribution);

// What the result of a full-graph run records (partition_costs_json): the samples of the result
// distribution.partition_costs names (whatever the partitioner), then `measured`, this run's.
nlohmann::json recorded_partition_costs(const DistributionConfig& distribution,
                                        std::span<const PartitionCostSample> measured);

// Every name distribution.partitioner takes: the workloads' partitioners and cost-balanced.
std::vector<std::string> distribution_partitioner_names();

// The node owners `distribution` asks for (distribution.partitioner, partition_seed).
NodePartition partition_nodes(const DistributionConfig& distribution, const Graph& graph,
                              int num_parts);

}  // namespace gnnbed
