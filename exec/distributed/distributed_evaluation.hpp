#pragma once
// Accuracy of a distributed model without any rank holding the whole workload: full-graph
// inference (full neighbourhoods, no dropout, as evaluate_parameters does on one process), layer
// by layer. For every layer, each rank computes the representations of the nodes it owns, a chunk
// of destinations at a time, fetching the inputs it lacks from the ranks that hold them (feature
// rows from their owners or feature columns from every rank, as the strategy placed them; hidden
// rows from their owners); the last layer is computed for its validation and test nodes only. A
// layer narrower than its input (out < in) is computed in its transform-first order with the
// products H W formed where H is held (for a column slice: partial products, summed at the
// owners, as P3 does), so that the narrower products travel instead of the rows. GCN's
// normalisation needs every source's degree in the whole graph, which the ranks add up once. The
// result equals evaluate_parameters on the whole dataset up to float rounding.
//
// Its traffic goes through the transport's data plane and is counted there; bytes_sent() and
// bytes_received() say how much, so that training reports can leave it out.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/nn/layers.hpp"
#include "exec/train/trainer.hpp"
#include "exec/transport.hpp"
#include "strategies/full_graph.hpp"
#include "strategies/config/model_spec.hpp"

namespace gnnbed {

class DistributedEvaluator {
 public:
  // `placements[q]` is what rank q holds of the features.
  DistributedEvaluator(const ModelSpec& spec, const LocalStore& store,
                       std::vector<FeaturePlacement> placements, Transport& transport);

  // Collective. Validation and test accuracy over every rank's nodes, on every rank.
  Accuracy evaluate(const std::vector<Parameter>& parameters);

  // Collective. The logits of `nodes` (owned by this rank), one row each.
  Matrix logits(const std::vector<Parameter>& parameters, std::span<const NodeId> nodes);

  // Data-plane bytes of every evaluation so far.
  const TrafficBytes& bytes_sent() const { return sent_; }
  const TrafficBytes& bytes_received() const { return received_; }

 private:
  // Reads rows of `nodes`, columns [column_begin, column_end), of this rank's part of a table.
  using RowReader = std::function<void(std::span<const NodeId> nodes, std::int64_t column_begin,
                                       std::int64_t column_end, float* out)>;

  Matrix forward(const std::vector<Parameter>& parameters, std::span<const NodeId> targets);
  // Collective: the rows of `nodes` of a table `width` columns wide, of which rank q holds
  // holders[q], each rank reading its part with `read`.
  Matrix fetch(std::span<const NodeId> nodes, std::int64_t width,
               const std::vector<FeaturePlacement>& holders, const RowReader& read, Traffic kind);
  // Collective: H W for the owned nodes' rows of H, which rank q holds as holders[q] says.
  Matrix owned_products(const Matrix& weights, const std::vector<FeaturePlacement>& holders,
                        const RowReader& read);
  // Collective: a transform-first layer's output for the block's destinations, from the owned
  // nodes' products (owned_products) of every rank, `width` columns per term; `bias` may be null
  // (SGC's first layer has none).
  Matrix aggregate_products(const Block& block, const Matrix& products, std::int64_t width,
                            const Parameter* bias);
  // Rows of a table with one row per owned node, from column `column` on.
  RowReader owned_rows_of(const Matrix& table, std::int64_t column) const;
  // A table `width` wide whose rows their owners hold.
  std::vector<FeaturePlacement> held_by_owners(std::int64_t width) const;
  // Collective: every node's degree in GCN's normalisation of the whole graph.
  void rescale_to_global_degrees(const Block& block, Matrix& input) const;

  ModelSpec spec_;
  const LocalStore& store_;
  std::vector<FeaturePlacement> placements_;
  Transport& transport_;
  NeighbourhoodBlockBuilder blocks_;
  std::vector<std::int32_t> global_degrees_;  // GCN only, once counted
  TrafficBytes sent_;
  TrafficBytes received_;
};

}  // namespace gnnbed
