// Entity partitions and edge buckets (entity_buckets.hpp).
#include "workloads/link_prediction/entity_buckets.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"

namespace gnnbed {

int Bucket::shared_partitions(const Bucket& other) const {
  if (lhs == rhs) return (other.lhs == lhs || other.rhs == lhs) ? 1 : 0;
  return static_cast<int>(lhs == other.lhs || lhs == other.rhs) +
         static_cast<int>(rhs == other.lhs || rhs == other.rhs);
}

void EntityPartitioning::check(std::int64_t num_entities, int num_partitions) {
  require(num_partitions >= 1 && num_partitions <= num_entities, "training.partitions",
          "must be in [1, " + std::to_string(num_entities) + "] (the entities), got " +
              std::to_string(num_partitions));
}

EntityPartitioning::EntityPartitioning(std::int64_t num_entities, int num_partitions,
                                       std::uint64_t seed) {
  check(num_entities, num_partitions);
  std::vector<std::int32_t> order(static_cast<std::size_t>(num_entities));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(hash_mix(seed, 0x7061727469ULL));
  shuffle(std::span(order), rng);
  partition_of_.resize(order.size());
  offset_of_.resize(order.size());
  members_.resize(static_cast<std::size_t>(num_partitions));
  const std::int64_t base = num_entities / num_partitions;
  const std::int64_t larger = num_entities % num_partitions;  // the first `larger` get one more
  std::size_t next = 0;
  for (int p = 0; p < num_partitions; ++p) {
    const std::int64_t size = base + (p < larger ? 1 : 0);
    std::vector<std::int32_t>& members = members_[static_cast<std::size_t>(p)];
    members.assign(order.begin() + static_cast<std::ptrdiff_t>(next),
                   order.begin() + static_cast<std::ptrdiff_t>(next) + size);
    next += static_cast<std::size_t>(size);
    std::sort(members.begin(), members.end());
    for (std::size_t offset = 0; offset < members.size(); ++offset) {
      partition_of_[static_cast<std::size_t>(members[offset])] = p;
      offset_of_[static_cast<std::size_t>(members[offset])] = static_cast<std::int32_t>(offset);
    }
  }
}

EdgeBuckets::EdgeBuckets(std::span<const Triple> edges, const EntityPartitioning& partitioning)
    : num_partitions_(partitioning.num_partitions()),
      edges_(static_cast<std::size_t>(num_partitions_) *
             static_cast<std::size_t>(num_partitions_)) {
  for (const Triple& edge : edges) {
    const Bucket bucket{partitioning.partition_of(edge.source),
                        partitioning.partition_of(edge.target)};
    edges_[static_cast<std::size_t>(index(bucket))].push_back(
        {partitioning.offset_of(edge.source), edge.relation, partitioning.offset_of(edge.target)});
  }
}

namespace {

// No edges yet in any of the partitioning's buckets.
std::vector<std::int64_t> empty_bucket_counts(const EntityPartitioning& partitioning) {
  const auto p = static_cast<std::size_t>(partitioning.num_partitions());
  return std::vector<std::int64_t>(p * p, 0);
}

// The slot of `edge`'s bucket, as EdgeBuckets::index numbers it.
std::size_t bucket_slot(const EntityPartitioning& partitioning, const Triple& edge) {
  return static_cast<std::size_t>(partitioning.partition_of(edge.source)) *
             static_cast<std::size_t>(partitioning.num_partitions()) +
         static_cast<std::size_t>(partitioning.partition_of(edge.target));
}

}  // namespace

std::vector<std::int64_t> bucket_counts(std::span<const Triple> edges,
                                        const EntityPartitioning& partitioning) {
  std::vector<std::int64_t> counts = empty_bucket_counts(partitioning);
  for (const Triple& edge : edges) ++counts[bucket_slot(partitioning, edge)];
  return counts;
}

std::vector<std::int64_t> planted_bucket_counts(const LinkPredictionSource& source,
                                                const EntityPartitioning& partitioning) {
  require(source.source == "planted", "workload.source",
          "bucket counts without the edges are for planted graphs, not '" + source.source + "'");
  require(partitioning.num_entities() == source.entities, "workload.entities",
          "the partitioning is of another graph");
  std::vector<std::int64_t> counts = empty_bucket_counts(partitioning);
  std::size_t position = 0;
  for_each_planted_edge(source.entities, source.group_size, source.degree, source.graph_seed,
                        [&](const Triple& edge) {
                          if (!is_held_out(position++, source.test_fraction, source.split_seed))
                            ++counts[bucket_slot(partitioning, edge)];
                        });
  return counts;
}

}  // namespace gnnbed
