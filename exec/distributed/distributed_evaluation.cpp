#include "exec/distributed/distributed_evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "exec/distributed/global_degrees.hpp"
#include "exec/nn/aggregation.hpp"
#include "exec/nn/model.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// In-edges per chunk of destinations: bounds the input rows one chunk fetches (at most this many
// plus the chunk's own nodes), so that no rank ever holds more than a slice of the features.
constexpr std::int64_t kChunkEdges = std::int64_t{1} << 16;
// Rows multiplied by a layer's weights at a time.
constexpr std::int64_t kChunkRows = std::int64_t{1} << 14;

struct Chunk {
  std::size_t begin = 0;
  std::size_t end = 0;
};

std::vector<Chunk> chunks_of(std::span<const NodeId> nodes, const Graph& structure) {
  std::vector<Chunk> chunks;
  Chunk chunk;
  std::int64_t edges = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::int64_t degree = structure.in_degree(nodes[i]);
    if (i > chunk.begin && edges + degree > kChunkEdges) {
      chunk.end = i;
      chunks.push_back(chunk);
      chunk.begin = i;
      edges = 0;
    }
    edges += degree;
  }
  if (chunk.begin < nodes.size()) chunks.push_back({chunk.begin, nodes.size()});
  return chunks;
}

template <typename T>
std::vector<std::span<const std::byte>> byte_views(const std::vector<std::vector<T>>& payloads) {
  std::vector<std::span<const std::byte>> views;
  for (const auto& payload : payloads) views.push_back(as_bytes_span(payload));
  return views;
}

// Rows [begin, end) of `m`.
Matrix row_slice(const Matrix& m, std::int64_t begin, std::int64_t end) {
  Matrix slice(end - begin, m.cols());
  std::copy(m.row(begin), m.row(end), slice.data());
  return slice;
}

// The weights layer l multiplies its input by, side by side: GCN's W, or SAGE's [W_self | W_neigh].
// The first `num_weights` of a layer's parameters side by side.
Matrix concatenated_weights(std::span<Parameter* const> layer_parameters, std::size_t num_weights) {
  const std::int64_t rows = layer_parameters[0]->value.rows();
  const std::int64_t width = layer_parameters[0]->value.cols();
  Matrix weights(rows, width * static_cast<std::int64_t>(num_weights));
  for (std::size_t w = 0; w < num_weights; ++w) {
    const Matrix& value = layer_parameters[w]->value;
    for (std::int64_t r = 0; r < rows; ++r) {
      std::copy_n(value.row(r), width, weights.row(r) + static_cast<std::int64_t>(w) * width);
    }
  }
  return weights;
}

}  // namespace

DistributedEvaluator::DistributedEvaluator(const ModelSpec& spec, const LocalStore& store,
                                           std::vector<FeaturePlacement> placements,
                                           Transport& transport)
    : spec_(spec),
      store_(store),
      placements_(std::move(placements)),
      transport_(transport),
      blocks_(store.structure()) {
  // The features as strategies place them: every rank the rows of its own nodes, or every rank
  // a slice of the columns, the slices covering them in rank order.
  const std::int64_t dim = spec.layer(0).in_dim;
  bool fits = !placements_.empty() && static_cast<int>(placements_.size()) == transport.size();
  std::int64_t next_column = 0;
  for (const FeaturePlacement& p : placements_) {
    if (!fits) break;
    if (p.owned_rows_only != placements_.front().owned_rows_only) fits = false;
    if (p.owned_rows_only) {
      fits = fits && p.column_begin == 0 && p.column_end == dim;
    } else {
      fits = fits && p.column_begin == next_column && p.column_end >= p.column_begin;
      next_column = p.column_end;
    }
  }
  if (fits && !placements_.front().owned_rows_only) fits = next_column == dim;
  if (!fits) {
    throw Error(
        "distributed evaluation reads the features of every rank's own nodes, or column "
        "slices that cover the features in rank order; these placements are neither");
  }
}

Accuracy DistributedEvaluator::evaluate(const std::vector<Parameter>& parameters) {
  const Split& split = store_.shard().split;
  std::vector<NodeId> targets = split.val;
  targets.insert(targets.end(), split.test.begin(), split.test.end());
  const Matrix out = logits(parameters, targets);
  auto correct = [&](const std::vector<NodeId>& nodes, std::size_t begin) {
    std::vector<std::int32_t> labels;
    for (const NodeId v : nodes) labels.push_back(store_.label(v));
    return cpu::count_correct(row_slice(out, static_cast<std::int64_t>(begin),
                                        static_cast<std::int64_t>(begin + nodes.size())),
                              labels);
  };
  const std::int64_t val_correct = transport_.sum_over_ranks(correct(split.val, 0));
  const std::int64_t test_correct =
      transport_.sum_over_ranks(correct(split.test, split.val.size()));
  const std::int64_t val_count =
      transport_.sum_over_ranks(static_cast<std::int64_t>(split.val.size()));
  const std::int64_t test_count =
      transport_.sum_over_ranks(static_cast<std::int64_t>(split.test.size()));
  auto ratio = [](std::int64_t right, std::int64_t all) {
    return all > 0 ? static_cast<double>(right) / static_cast<double>(all) : 0.0;
  };
  return {ratio(val_correct, val_count), ratio(test_correct, test_count)};
}

Matrix DistributedEvaluator::logits(const std::vector<Parameter>& parameters,
                                    std::span<const NodeId> nodes) {
  for (const NodeId v : nodes) {
    if (store_.owned_position(v) < 0) {
      throw Error("distributed evaluation: rank " + std::to_string(transport_.rank()) +
                  " asked for node " + std::to_string(v) + ", which it does not own");
    }
  }
  const TrafficBytes sent_before = transport_.bytes_sent();
  const TrafficBytes received_before = transport_.bytes_received();
  Matrix out = forward(parameters, nodes);
  sent_ += transport_.bytes_sent() - sent_before;
  received_ += transport_.bytes_received() - received_before;
  return out;
}

DistributedEvaluator::RowReader DistributedEvaluator::owned_rows_of(const Matrix& table,
                                                                    std::int64_t column) const {
  return [this, &table, column](std::span<const NodeId> nodes, std::int64_t begin, std::int64_t end,
                                float* out) {
    const std::int64_t width = end - begin;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::int32_t position = store_.owned_position(nodes[i]);
      if (position < 0) {
        throw Error("rank " + std::to_string(transport_.rank()) + " was asked for a row of node " +
                    std::to_string(nodes[i]) + ", which it does not own");
      }
      std::copy_n(table.row(position) + column + begin, width,
                  out + static_cast<std::int64_t>(i) * width);
    }
  };
}

std::vector<FeaturePlacement> DistributedEvaluator::held_by_owners(std::int64_t width) const {
  return std::vector<FeaturePlacement>(placements_.size(), FeaturePlacement{true, 0, width});
}

Matrix DistributedEvaluator::forward(const std::vector<Parameter>& parameters,
                                     std::span<const NodeId> targets) {
  if (spec_.gcn_normalised() && global_degrees_.empty()) {
    global_degrees_ = global_gcn_degrees(store_, transport_);
  }
  Model model(spec_, 0);
  set_parameter_values(model, parameters);
  const std::vector<Parameter*> all = model.parameters();
  const std::span<const NodeId> owned = store_.owned_nodes();
  const RowReader read_features = [&](std::span<const NodeId> nodes, std::int64_t begin,
                                      std::int64_t end, float* out) {
    store_.gather_features(nodes, begin, end, out);
  };
  Matrix hidden;  // the previous layer's output, one row per owned node

  const int num_layers = spec_.num_layers();
  for (int l = 0; l < num_layers; ++l) {
    std::vector<Parameter*> layer_parameters;
    for (Parameter* p : all) {
      if (p->layer == l) layer_parameters.push_back(p);
    }
    const LayerShape& shape = spec_.layer(l);
    const std::vector<FeaturePlacement> input_holders =
        l == 0 ? placements_ : held_by_owners(shape.in_dim);
    const RowReader read_input = l == 0 ? read_features : owned_rows_of(hidden, 0);
    const std::span<const NodeId> destinations = l == num_layers - 1 ? targets : owned;
    const std::vector<Chunk> chunks = chunks_of(destinations, store_.structure());
    // Every rank takes part in every chunk's exchanges, with no destinations once it has run out.
    const auto num_chunks =
        static_cast<std::size_t>(transport_.max_over_ranks(static_cast<double>(chunks.size())));
    // A layer that multiplies before aggregating (out < in) has the rows' products computed where
    // the rows are held, and moves those, narrower than the rows.
    // (GAT's attention needs more than the products: it fetches the rows and runs the layer.)
    const bool transform_first = spec_.transforms_first(l) && spec_.kind() != ModelKind::gat;
    const auto num_weights = static_cast<std::size_t>(spec_.num_weights(l));
    const Matrix products =
        transform_first ? owned_products(concatenated_weights(layer_parameters, num_weights),
                                         input_holders, read_input)
                        : Matrix();
    const Parameter* bias = shape.bias ? layer_parameters.back() : nullptr;
    const std::unique_ptr<GnnLayer> layer =
        transform_first ? nullptr : make_layer(spec_, l, layer_parameters);
    Matrix out(static_cast<std::int64_t>(destinations.size()), shape.out_dim);
    for (std::size_t c = 0; c < num_chunks; ++c) {
      const Chunk chunk = c < chunks.size() ? chunks[c] : Chunk{};
      const Block block = blocks_.build(destinations.subspan(chunk.begin, chunk.end - chunk.begin));
      Matrix y;
      if (transform_first) {
        y = aggregate_products(block, products, shape.out_dim, bias);
      } else {
        Matrix input = fetch(block.src_nodes, shape.in_dim, input_holders, read_input,
                             l == 0 ? Traffic::features : Traffic::activations);
        if (spec_.gcn_normalised()) rescale_to_global_degrees(block, input);
        y = layer->forward(block, input);
      }
      if (shape.relu) cpu::relu_forward(y);
      std::copy(y.data(), y.data() + y.size(), out.row(static_cast<std::int64_t>(chunk.begin)));
    }
    hidden = std::move(out);
  }
  return hidden;
}

// GCN (and SGC's first layer, without b): y = A (H W) + b; GraphSAGE: y = (H W_self)[dst] + mean(H
// W_neigh) + b: the layers' transform-first order, with the products H W of the owned nodes already
// computed.
Matrix DistributedEvaluator::aggregate_products(const Block& block, const Matrix& products,
                                                std::int64_t width, const Parameter* bias) {
  const bool sage = spec_.kind() == ModelKind::sage;
  // GraphSAGE's products hold the self term's columns, then the neighbour term's.
  Matrix z = fetch(block.src_nodes, width, held_by_owners(width),
                   owned_rows_of(products, sage ? width : 0), Traffic::activations);
  Matrix y;
  if (sage) {
    cpu::spmm(mean_aggregation(block), z, y);
    for (std::int64_t d = 0; d < block.num_dst; ++d) {
      const float* self =
          products.row(store_.owned_position(block.src_nodes[static_cast<std::size_t>(d)]));
      float* row = y.row(d);
      for (std::int64_t j = 0; j < width; ++j) row[j] += self[j];
    }
  } else {
    rescale_to_global_degrees(block, z);
    cpu::spmm(gcn_aggregation(block), z, y);
  }
  if (bias != nullptr) cpu::add_row_vector(y, bias->value);
  return y;
}

Matrix DistributedEvaluator::owned_products(const Matrix& weights,
                                            const std::vector<FeaturePlacement>& holders,
                                            const RowReader& read) {
  const std::span<const NodeId> owned = store_.owned_nodes();
  const auto me = static_cast<std::size_t>(transport_.rank());
  const FeaturePlacement& mine = holders[me];
  const Matrix my_weights = row_slice(weights, mine.column_begin, mine.column_end);
  const std::int64_t held_width = mine.column_end - mine.column_begin;
  Matrix products(static_cast<std::int64_t>(owned.size()), weights.cols());
  auto multiply = [&](std::span<const NodeId> nodes, Matrix& result) {
    Matrix rows(static_cast<std::int64_t>(nodes.size()), held_width);
    read(nodes, mine.column_begin, mine.column_end, rows.data());
    cpu::gemm(rows, false, my_weights, false, result);
  };
  if (mine.owned_rows_only) {
    for (std::size_t begin = 0; begin < owned.size(); begin += kChunkRows) {
      const std::size_t end = std::min(owned.size(), begin + kChunkRows);
      Matrix result;
      multiply(owned.subspan(begin, end - begin), result);
      std::copy(result.data(), result.data() + result.size(),
                products.row(static_cast<std::int64_t>(begin)));
    }
    return products;
  }
  // Column slices: every rank multiplies its slice of every node's row by its rows of the
  // weights, and each owner adds up its nodes' partial products, in rank order.
  const NodePartition& partition = store_.partition();
  const std::int64_t n = partition.num_nodes();
  const auto num_ranks = holders.size();
  const auto width = static_cast<std::size_t>(weights.cols());
  std::vector<NodeId> nodes;
  for (std::int64_t begin = 0; begin < n; begin += kChunkRows) {
    const std::int64_t end = std::min(n, begin + kChunkRows);
    nodes.resize(static_cast<std::size_t>(end - begin));
    std::iota(nodes.begin(), nodes.end(), static_cast<NodeId>(begin));
    Matrix partial;
    multiply(nodes, partial);
    std::vector<std::vector<float>> to_owner(num_ranks);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto owner = static_cast<std::size_t>(partition.owner(nodes[i]));
      const float* row = partial.row(static_cast<std::int64_t>(i));
      to_owner[owner].insert(to_owner[owner].end(), row, row + width);
    }
    TransferTiming timing;
    const std::vector<float> local = std::move(to_owner[me]);
    to_owner[me].clear();
    const auto received = transport_.all_to_all(byte_views(to_owner), Traffic::activations, timing);
    // My nodes in [begin, end) sit at consecutive places of the owned list.
    const auto first = std::lower_bound(owned.begin(), owned.end(), static_cast<NodeId>(begin));
    const auto last = std::lower_bound(owned.begin(), owned.end(), static_cast<NodeId>(end));
    const std::size_t count = static_cast<std::size_t>(last - first) * width;
    float* target = products.row(first - owned.begin());
    for (std::size_t q = 0; q < num_ranks; ++q) {
      const std::vector<float> part = q == me ? local : from_bytes<float>(received[q]);
      if (part.size() != count) {
        throw Error("rank " + std::to_string(q) + " sent partial products of " +
                    std::to_string(part.size() / width) + " nodes, rank " + std::to_string(me) +
                    " owns " + std::to_string(count / width) + " of them");
      }
      for (std::size_t k = 0; k < count; ++k) target[k] += part[k];
    }
  }
  return products;
}

Matrix DistributedEvaluator::fetch(std::span<const NodeId> nodes, std::int64_t width,
                                   const std::vector<FeaturePlacement>& holders,
                                   const RowReader& read, Traffic kind) {
  const int rank = transport_.rank();
  const std::size_t num_ranks = holders.size();
  const NodePartition& partition = store_.partition();
  // What every holder (this rank included) must supply, and where its rows go.
  std::vector<std::vector<NodeId>> requests(num_ranks);
  std::vector<std::vector<std::size_t>> rows(num_ranks);
  for (std::size_t q = 0; q < num_ranks; ++q) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!holders[q].owned_rows_only || partition.owner(nodes[i]) == static_cast<int>(q)) {
        requests[q].push_back(nodes[i]);
        rows[q].push_back(i);
      }
    }
  }
  Matrix out(static_cast<std::int64_t>(nodes.size()), width);
  auto place = [&](std::size_t q, const void* values) {
    const std::int64_t begin = holders[q].column_begin;
    const auto row_bytes = static_cast<std::size_t>(holders[q].column_end - begin) * sizeof(float);
    for (std::size_t k = 0; k < rows[q].size(); ++k) {
      std::memcpy(out.row(static_cast<std::int64_t>(rows[q][k])) + begin,
                  static_cast<const std::byte*>(values) + k * row_bytes, row_bytes);
    }
  };
  const auto me = static_cast<std::size_t>(rank);
  const FeaturePlacement& mine = holders[me];
  const auto my_width = static_cast<std::size_t>(mine.column_end - mine.column_begin);
  {
    std::vector<float> local(requests[me].size() * my_width);
    read(requests[me], mine.column_begin, mine.column_end, local.data());
    place(me, local.data());
  }
  TransferTiming timing;
  requests[me].clear();
  const auto asked = transport_.all_to_all(byte_views(requests), Traffic::structure, timing);
  std::vector<std::vector<float>> replies(num_ranks);
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (q == me) continue;
    const std::vector<NodeId> wanted = from_bytes<NodeId>(asked[q]);
    for (const NodeId v : wanted) {
      if (v < 0 || v >= partition.num_nodes()) {
        throw Error("rank " + std::to_string(q) + " asked rank " + std::to_string(rank) +
                    " for node " + std::to_string(v) + ", which does not exist");
      }
    }
    replies[q].resize(wanted.size() * my_width);
    read(wanted, mine.column_begin, mine.column_end, replies[q].data());
  }
  const auto answered = transport_.all_to_all(byte_views(replies), kind, timing);
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (q == me) continue;
    const auto expected =
        rows[q].size() * static_cast<std::size_t>(holders[q].column_end - holders[q].column_begin);
    if (answered[q].size() != expected * sizeof(float)) {
      throw Error("rank " + std::to_string(q) + " sent " +
                  std::to_string(answered[q].size() / sizeof(float)) + " values for " +
                  std::to_string(expected) + " requested");
    }
    place(q, answered[q].data());
  }
  return out;
}

// gcn_aggregation normalises by the sources' degrees in the block; multiplying each source's row
// by sqrt(block degree / whole-graph degree) turns that into the whole graph's normalisation (the
// layer is linear in its input before the bias).
void DistributedEvaluator::rescale_to_global_degrees(const Block& block, Matrix& input) const {
  const std::vector<std::int32_t> degrees = gcn_source_degrees(block);
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    const std::int32_t global = global_degrees_[static_cast<std::size_t>(block.src_nodes[i])];
    const auto factor = static_cast<float>(std::sqrt(static_cast<double>(degrees[i]) / global));
    float* row = input.row(static_cast<std::int64_t>(i));
    for (std::int64_t j = 0; j < input.cols(); ++j) row[j] *= factor;
  }
}

}  // namespace gnnbed
