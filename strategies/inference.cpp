#include "strategies/inference.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "strategies/full_graph.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// In-edges per chunk of destinations: bounds the input rows one chunk fetches (at most this many
// plus the chunk's own nodes), so that no rank ever holds more than a slice of the inputs.
constexpr std::int64_t kChunkEdges = std::int64_t{1} << 16;
// Rows multiplied by a layer's weights at a time where the inputs come from the feature store.
constexpr std::int64_t kChunkRows = std::int64_t{1} << 14;

// Which destinations a layer computes: every owned node (all layers but the last), or the
// validation and test nodes (the last).
enum Chunking : std::size_t { kOwnedChunks = 0, kTargetChunks = 1 };
constexpr std::size_t kNumChunkings = 2;

std::string chunking_name(std::size_t k) { return k == kOwnedChunks ? "owned" : "targets"; }

// A chunk of destinations with its block of full in-neighbourhoods, and the sources each rank
// owns (in block order) with their block positions, which every layer's plan shares.
struct Chunk {
  std::int64_t begin = 0;  // in the destination list
  std::int64_t end = 0;
  std::shared_ptr<const Block> block = std::make_shared<const Block>();
  std::vector<std::vector<std::int32_t>> owned_by;                          // per rank
  std::vector<std::shared_ptr<const std::vector<std::int32_t>>> positions;  // per rank

  // A chunk of no destinations (a rank that has run out of its own still serves its peers).
  explicit Chunk(int num_ranks)
      : owned_by(static_cast<std::size_t>(num_ranks)),
        positions(static_cast<std::size_t>(num_ranks),
                  std::make_shared<const std::vector<std::int32_t>>()) {}
};

// Whether layer l multiplies by its weights before it aggregates, so that products travel.
bool multiplies_first(const ModelSpec& model, int l) {
  return model.kind() != ModelKind::gat && model.transforms_first(l);
}

std::vector<std::int32_t> iota_index(std::int64_t begin, std::int64_t end) {
  std::vector<std::int32_t> values(
      static_cast<std::size_t>(std::max<std::int64_t>(0, end - begin)));
  std::iota(values.begin(), values.end(), static_cast<std::int32_t>(begin));
  return values;
}

std::vector<Chunk> cut_chunks(const EvaluationShare& share, std::span<const NodeId> nodes,
                              NeighbourhoodBlockBuilder& blocks, int num_ranks) {
  std::vector<Chunk> chunks;
  std::size_t begin = 0;
  std::int64_t edges = 0;
  auto close = [&](std::size_t end) {
    Chunk chunk(num_ranks);
    chunk.begin = static_cast<std::int64_t>(begin);
    chunk.end = static_cast<std::int64_t>(end);
    Block block = blocks.build(nodes.subspan(begin, end - begin));
    if (share.gcn_degrees) {
      for (const NodeId v : block.src_nodes)
        block.source_degrees.push_back((*share.gcn_degrees)[static_cast<std::size_t>(v)]);
    }
    std::vector<std::vector<std::int32_t>> positions(static_cast<std::size_t>(num_ranks));
    for (std::size_t i = 0; i < block.src_nodes.size(); ++i) {
      const auto owner = static_cast<std::size_t>(share.partition.owner(block.src_nodes[i]));
      chunk.owned_by[owner].push_back(block.src_nodes[i]);
      positions[owner].push_back(static_cast<std::int32_t>(i));
    }
    for (std::size_t q = 0; q < positions.size(); ++q) {
      chunk.positions[q] =
          std::make_shared<const std::vector<std::int32_t>>(std::move(positions[q]));
    }
    chunk.block = std::make_shared<const Block>(std::move(block));
    chunks.push_back(std::move(chunk));
    begin = end;
    edges = 0;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::int64_t degree = share.structure->in_degree(nodes[i]);
    if (i > begin && edges + degree > kChunkEdges) close(i);
    edges += degree;
  }
  if (begin < nodes.size()) close(nodes.size());
  return chunks;
}

// What a peer announced: per chunking, per chunk, the nodes it asks this rank for.
using PeerRequests = std::array<std::vector<std::vector<std::int32_t>>, kNumChunkings>;

PeerRequests decode_requests(const std::vector<std::int32_t>& payload, int peer) {
  auto fail = [&](const std::string& what) {
    throw Error("the evaluation announcement of rank " + std::to_string(peer) + " " + what);
  };
  if (payload.size() < kNumChunkings) fail("has no header");
  PeerRequests requests;
  std::size_t at = kNumChunkings;
  for (std::size_t k = 0; k < kNumChunkings; ++k) {
    if (payload[k] < 0) fail("counts " + std::to_string(payload[k]) + " chunks");
    requests[k].resize(static_cast<std::size_t>(payload[k]));
    for (auto& ids : requests[k]) {
      if (at >= payload.size() || payload[at] < 0 ||
          payload.size() - at - 1 < static_cast<std::size_t>(payload[at])) {
        fail("ends inside its " + chunking_name(k) + " chunks");
      }
      const auto count = static_cast<std::size_t>(payload[at++]);
      ids.assign(payload.begin() + static_cast<std::ptrdiff_t>(at),
                 payload.begin() + static_cast<std::ptrdiff_t>(at + count));
      at += count;
    }
  }
  if (at != payload.size()) fail("has " + std::to_string(payload.size() - at) + " values too many");
  return requests;
}

}  // namespace

void check_evaluation_placements(const std::vector<FeaturePlacement>& placements,
                                 std::int64_t feature_dim) {
  bool fits = !placements.empty();
  std::int64_t next_column = 0;
  for (const FeaturePlacement& p : placements) {
    if (!fits) break;
    if (p.owned_rows_only != placements.front().owned_rows_only) fits = false;
    if (p.owned_rows_only) {
      fits = fits && p.column_begin == 0 && p.column_end == feature_dim;
    } else {
      fits = fits && p.column_begin == next_column && p.column_end >= p.column_begin;
      next_column = p.column_end;
    }
  }
  if (fits && !placements.front().owned_rows_only) fits = next_column == feature_dim;
  if (!fits) {
    throw Error(
        "distributed evaluation reads the features of every rank's own nodes, or column "
        "slices that cover the features in rank order; these placements are neither");
  }
}

struct EvaluationPlanner::State {
  explicit State(EvaluationShare from)
      : share(std::move(from)),
        num_ranks(static_cast<int>(share.placements.size())),
        no_chunk(num_ranks) {}

  EvaluationShare share;
  int num_ranks;
  std::array<std::vector<Chunk>, kNumChunkings> chunks;
  Chunk no_chunk;  // what a rank plans once its chunks have run out
  // Whether a chunking's announcements name every source rather than the peer's own: the first
  // layer reads column-sliced features row by row (it does not multiply first), so every rank
  // sends its slice of every source.
  std::array<bool, kNumChunkings> all_sources{};
  Announcement announcement;

  std::size_t chunking_of(int layer) const {
    return layer == share.model.num_layers() - 1 ? kTargetChunks : kOwnedChunks;
  }
  bool columns() const { return !share.placements.front().owned_rows_only; }
  void announce();
};

void EvaluationPlanner::State::announce() {
  announcement = Announcement(static_cast<std::size_t>(num_ranks));
  for (int q = 0; q < num_ranks; ++q) {
    if (q == share.rank) continue;
    std::vector<std::int32_t> payload;
    for (std::size_t k = 0; k < kNumChunkings; ++k)
      payload.push_back(static_cast<std::int32_t>(chunks[k].size()));
    for (std::size_t k = 0; k < kNumChunkings; ++k) {
      for (const Chunk& chunk : chunks[k]) {
        const std::vector<NodeId>& asked =
            all_sources[k] ? chunk.block->src_nodes : chunk.owned_by[static_cast<std::size_t>(q)];
        payload.push_back(static_cast<std::int32_t>(asked.size()));
        payload.insert(payload.end(), asked.begin(), asked.end());
      }
    }
    announcement.set(static_cast<std::size_t>(q),
                     std::make_shared<const std::vector<std::int32_t>>(std::move(payload)));
  }
}

EvaluationPlanner::EvaluationPlanner(EvaluationShare share)
    : state_(std::make_unique<State>(std::move(share))) {
  State& s = *state_;
  check_evaluation_placements(s.share.placements, s.share.model.layer(0).in_dim);
  if (s.share.structure == nullptr) throw Error("evaluation planning needs the rank's structure");
  if (s.share.model.gcn_normalised() && !s.share.gcn_degrees) {
    throw Error("evaluating a GCN-normalised model needs the whole graph's GCN degrees");
  }
  NeighbourhoodBlockBuilder blocks(*s.share.structure);
  const int num_layers = s.share.model.num_layers();
  if (num_layers > 1)
    s.chunks[kOwnedChunks] = cut_chunks(s.share, s.share.owned, blocks, s.num_ranks);
  s.chunks[kTargetChunks] = cut_chunks(s.share, s.share.targets, blocks, s.num_ranks);
  s.all_sources[s.chunking_of(0)] = s.columns() && !multiplies_first(s.share.model, 0);
  s.announce();
}

EvaluationPlanner::~EvaluationPlanner() = default;

const Announcement& EvaluationPlanner::announcement() const { return state_->announcement; }

namespace {

// Where a layer's inputs come from: the feature store, or a dense table with a row per owned node
// (its columns [column_begin, column_end)).
struct InputSource {
  int table = -1;  // -1: the feature store
  std::int64_t column_begin = 0;
  std::int64_t column_end = 0;
  bool all_sources = false;  // column-sliced features: every rank sends its slice of every source
  Traffic traffic = Traffic::activations;
};

class PlanWriter {
 public:
  PlanWriter(const EvaluationPlanner::State& state, const Announcement& received)
      : s_(state),
        model_(state.share.model),
        rank_(state.share.rank),
        builder_("evaluation", state.share.rank, state.num_ranks, 0, 0) {
    for (const ParameterSpec& p : full_model_parameters(model_)) builder_.add_parameter(p);
    add_announcement(builder_, s_.announcement, received, rank_);
    builder_.end_prologue();
    requests_.resize(static_cast<std::size_t>(s_.num_ranks));
    for (std::size_t k = 0; k < kNumChunkings; ++k) num_chunks_[k] = s_.chunks[k].size();
    for (int q = 0; q < s_.num_ranks; ++q) {
      if (q == rank_) continue;
      requests_[static_cast<std::size_t>(q)] =
          decode_requests(received[static_cast<std::size_t>(q)], q);
      for (std::size_t k = 0; k < kNumChunkings; ++k)
        num_chunks_[k] = std::max(num_chunks_[k], requests_[static_cast<std::size_t>(q)][k].size());
    }
  }

  Plan write() {
    int table = -1;
    for (int l = 0; l < model_.num_layers(); ++l) table = layer(l, table);
    return builder_.finish();
  }

 private:
  const Chunk& chunk(std::size_t k, std::size_t c) const {
    return c < s_.chunks[k].size() ? s_.chunks[k][c] : s_.no_chunk;
  }
  std::int64_t width_of(const InputSource& source, int q) const {
    if (source.all_sources) {
      const FeaturePlacement& p = s_.share.placements[static_cast<std::size_t>(q)];
      return p.column_end - p.column_begin;
    }
    return source.column_end - source.column_begin;
  }
  int layer(int l, int input_table);
  int chunk_input(std::size_t k, std::size_t c, const InputSource& source,
                  const std::string& label);
  // The rows of `nodes` (this rank's features, or owned rows of a table) in a new tensor.
  int gather(const InputSource& source, const std::vector<std::int32_t>& nodes,
             const std::string& name);
  std::vector<std::int32_t> served(std::size_t k, std::size_t c, int q, bool all_sources) const;
  int products(int l, int input_table);
  int feature_products(int l, const std::vector<std::string>& weights, std::int64_t width);
  int partial_products(int l, const std::vector<std::string>& weights, std::int64_t width);
  int transform(int l, int input, const std::vector<std::string>& weights, std::int64_t width,
                const std::string& name);
  int combine(int l, std::size_t k, std::size_t c, int input, int products);
  int forward(int l, std::size_t k, std::size_t c, int input);
  int scatter(const std::string& name, std::int64_t rows, std::int64_t cols, std::vector<int> pairs,
              bool keep);
  std::int64_t owned_position(NodeId v) const {
    const auto& owned = s_.share.owned;
    return std::lower_bound(owned.begin(), owned.end(), v) - owned.begin();
  }

  const EvaluationPlanner::State& s_;
  const ModelSpec& model_;
  const int rank_;
  PlanBuilder builder_;
  std::vector<PeerRequests> requests_;                   // per peer
  std::array<std::size_t, kNumChunkings> num_chunks_{};  // the most of any rank
};

int PlanWriter::layer(int l, int input_table) {
  const std::size_t k = s_.chunking_of(l);
  const LayerShape& shape = model_.layer(l);
  const std::string name = "layer" + std::to_string(l);
  const bool first = multiplies_first(model_, l);
  InputSource source;
  int product_table = -1;
  if (first) {
    product_table = products(l, input_table);
    const bool sage = model_.kind() == ModelKind::sage;
    // GraphSAGE's products hold the self term's columns, then the neighbour term's: only the
    // latter travel.
    source = {product_table, sage ? shape.out_dim : 0,
              (sage ? 2 : 1) * std::int64_t{shape.out_dim}};
  } else if (l == 0) {
    source = {-1, 0, shape.in_dim, s_.columns(), Traffic::features};
  } else {
    source = {input_table, 0, shape.in_dim};
  }
  std::vector<int> parts;
  for (std::size_t c = 0; c < num_chunks_[k]; ++c) {
    const std::string label = name + ".chunk" + std::to_string(c);
    const int input = chunk_input(k, c, source, label);
    const int output = first ? combine(l, k, c, input, product_table) : forward(l, k, c, input);
    if (shape.relu) {
      Op relu;
      relu.kind = OpKind::relu;
      relu.label = label + ".relu";
      relu.set_input(Input::tensor, output);
      relu.outputs = {output};
      relu.memory_bytes = 2 * builder_.tensor(output).bytes();
      builder_.add_op(std::move(relu));
    }
    if (c < s_.chunks[k].size()) {
      const Chunk& part = chunk(k, c);
      parts.push_back(builder_.add_index(label + ".rows", iota_index(part.begin, part.end)));
      parts.push_back(output);
    }
  }
  const bool last = l == model_.num_layers() - 1;
  const auto rows =
      static_cast<std::int64_t>(last ? s_.share.targets.size() : s_.share.owned.size());
  return scatter(last ? "logits" : name + ".output", rows, shape.out_dim, std::move(parts), last);
}

std::vector<std::int32_t> PlanWriter::served(std::size_t k, std::size_t c, int q,
                                             bool all_sources) const {
  const auto& asked = requests_[static_cast<std::size_t>(q)][k];
  if (c >= asked.size()) return {};
  if (all_sources || !s_.all_sources[k]) return asked[c];
  // The peer named every source of the chunk; of these this rank serves its own.
  std::vector<std::int32_t> mine;
  for (const NodeId v : asked[c]) {
    if (s_.share.partition.owner(v) == rank_) mine.push_back(v);
  }
  return mine;
}

int PlanWriter::chunk_input(std::size_t k, std::size_t c, const InputSource& source,
                            const std::string& label) {
  const Chunk& part = chunk(k, c);
  const auto me = static_cast<std::size_t>(rank_);
  Op exchange = exchange_op(label + ".exchange", source.traffic, s_.num_ranks);
  for (int q = 0; q < s_.num_ranks; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    const std::vector<std::int32_t> serve = served(k, c, q, source.all_sources);
    exchange.inputs[slot] = gather(source, serve, label + ".for_rank" + std::to_string(q));
    exchange.bytes_to[slot] = builder_.tensor(exchange.inputs[slot]).bytes();
    const auto asked = static_cast<std::int64_t>(source.all_sources ? part.block->src_nodes.size()
                                                                    : part.owned_by[slot].size());
    exchange.outputs[slot] = builder_.add_transient(label + ".from_rank" + std::to_string(q), asked,
                                                    width_of(source, q));
    exchange.bytes_from[slot] = builder_.tensor(exchange.outputs[slot]).bytes();
  }
  const int local = gather(source, source.all_sources ? part.block->src_nodes : part.owned_by[me],
                           label + ".local");
  std::vector<int> received = exchange.outputs;
  builder_.add_op(std::move(exchange));
  received[me] = local;
  const std::int64_t width = source.all_sources ? model_.layer(0).in_dim : width_of(source, rank_);
  const int input = builder_.add_transient(label + ".input", part.block->num_src(), width);
  Op assemble;
  assemble.outputs = {input};
  assemble.label = label + ".assemble";
  if (source.all_sources) {
    assemble.kind = OpKind::concat_columns;
    assemble.inputs = received;
  } else {
    assemble.kind = OpKind::scatter_rows;
    for (int q = 0; q < s_.num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      assemble.inputs.push_back(
          builder_.add_index(label + ".positions" + std::to_string(q), part.positions[slot]));
      assemble.inputs.push_back(received[slot]);
    }
  }
  assemble.memory_bytes = 2 * builder_.tensor(input).bytes();
  builder_.add_op(std::move(assemble));
  return input;
}

int PlanWriter::gather(const InputSource& source, const std::vector<std::int32_t>& nodes,
                       const std::string& name) {
  const auto rows = static_cast<std::int64_t>(nodes.size());
  if (source.table < 0) {
    const FeaturePlacement& mine = s_.share.placements[static_cast<std::size_t>(rank_)];
    const int ids = builder_.add_index(name + ".nodes", nodes);
    const int output = builder_.add_transient(name, rows, mine.column_end - mine.column_begin);
    builder_.add_op(gather_features_op("gather " + name, ids, output, mine.column_begin,
                                       mine.column_end, rows));
    return output;
  }
  std::vector<std::int32_t> positions;
  positions.reserve(nodes.size());
  for (const NodeId v : nodes) {
    const std::int64_t at = owned_position(v);
    if (at >= static_cast<std::int64_t>(s_.share.owned.size()) ||
        s_.share.owned[static_cast<std::size_t>(at)] != v) {
      throw Error("rank " + std::to_string(rank_) + " was asked for a row of node " +
                  std::to_string(v) + ", which it does not own");
    }
    positions.push_back(static_cast<std::int32_t>(at));
  }
  const int index = builder_.add_index(name + ".positions", std::move(positions));
  const int output = builder_.add_transient(name, rows, source.column_end - source.column_begin);
  builder_.add_op(gather_rows_op(builder_, "gather " + name, index, source.table, output,
                                 source.column_begin, source.column_end));
  return output;
}

int PlanWriter::products(int l, int input_table) {
  std::vector<std::string> weights;
  for (const ParameterShape& p : model_.parameters(l)) {
    if (p.is_weight) weights.push_back(parameter_name(l, p.name));
  }
  const auto width = static_cast<std::int64_t>(weights.size()) * model_.layer(l).out_dim;
  if (l > 0) {
    return transform(l, input_table, weights, width, "layer" + std::to_string(l) + ".products");
  }
  return s_.columns() ? partial_products(l, weights, width) : feature_products(l, weights, width);
}

int PlanWriter::transform(int l, int input, const std::vector<std::string>& weights,
                          std::int64_t width, const std::string& name) {
  const TensorSpec& in = builder_.tensor(input);
  const int output = builder_.add_transient(name, in.rows, width);
  Op op;
  op.kind = OpKind::transform;
  op.label = name + ".transform";
  op.set_input(Input::tensor, input);
  op.outputs = {output};
  op.layer = l;
  op.parameters = weights;
  op.flops = 2.0 * static_cast<double>(in.rows) * static_cast<double>(in.cols) *
             static_cast<double>(width);
  op.memory_bytes = in.bytes() + builder_.tensor(output).bytes();
  if (s_.columns() && l == 0) {
    const FeaturePlacement& mine = s_.share.placements[static_cast<std::size_t>(rank_)];
    op.partial = true;
    op.column_begin = mine.column_begin;
    op.column_end = mine.column_end;
  }
  builder_.add_op(std::move(op));
  return output;
}

// The first layer's products with the feature rows held by their owners: a slice of the owned
// rows at a time.
int PlanWriter::feature_products(int l, const std::vector<std::string>& weights,
                                 std::int64_t width) {
  const auto& owned = s_.share.owned;
  const auto num_owned = static_cast<std::int64_t>(owned.size());
  const InputSource features{-1, 0, model_.layer(l).in_dim};
  std::vector<int> parts;
  for (std::int64_t begin = 0; begin < num_owned; begin += kChunkRows) {
    const std::int64_t end = std::min(num_owned, begin + kChunkRows);
    const std::string name = "layer0.rows" + std::to_string(begin);
    const int rows =
        gather(features, std::vector<std::int32_t>(owned.begin() + begin, owned.begin() + end),
               name + ".features");
    parts.push_back(builder_.add_index(name + ".positions", iota_index(begin, end)));
    parts.push_back(transform(l, rows, weights, width, name + ".products"));
  }
  return scatter("layer0.products", num_owned, width, std::move(parts), false);
}

// The first layer's products with the features split by column: every rank multiplies its slice
// of every node's row by its rows of the weights, and each owner adds up its nodes' partial
// products in rank order.
int PlanWriter::partial_products(int l, const std::vector<std::string>& weights,
                                 std::int64_t width) {
  const NodePartition& partition = s_.share.partition;
  const std::int64_t n = partition.num_nodes();
  const InputSource features{-1, 0, model_.layer(l).in_dim, true, Traffic::features};
  std::vector<int> parts;
  for (std::int64_t begin = 0; begin < n; begin += kChunkRows) {
    const std::int64_t end = std::min(n, begin + kChunkRows);
    const std::string name = "layer0.rows" + std::to_string(begin);
    const int rows = gather(features, iota_index(begin, end), name + ".features");
    const int partial = transform(l, rows, weights, width, name + ".partial_products");
    std::vector<std::vector<std::int32_t>> at_owner(static_cast<std::size_t>(s_.num_ranks));
    for (std::int64_t v = begin; v < end; ++v) {
      at_owner[static_cast<std::size_t>(partition.owner(static_cast<NodeId>(v)))].push_back(
          static_cast<std::int32_t>(v - begin));
    }
    const auto mine = static_cast<std::int64_t>(at_owner[static_cast<std::size_t>(rank_)].size());
    Op exchange = exchange_op(name + ".exchange", Traffic::activations, s_.num_ranks);
    std::vector<int> sums;
    for (int q = 0; q < s_.num_ranks; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      const int positions =
          builder_.add_index(name + ".owned_by" + std::to_string(q), at_owner[slot]);
      const int rows_for_q =
          builder_.add_transient(name + ".for_rank" + std::to_string(q),
                                 static_cast<std::int64_t>(at_owner[slot].size()), width);
      builder_.add_op(gather_rows_op(builder_, "gather " + builder_.tensor(rows_for_q).name,
                                     positions, partial, rows_for_q));
      if (q == rank_) {
        sums.push_back(rows_for_q);
        continue;
      }
      exchange.inputs[slot] = rows_for_q;
      exchange.bytes_to[slot] = builder_.tensor(rows_for_q).bytes();
      exchange.outputs[slot] =
          builder_.add_transient(name + ".from_rank" + std::to_string(q), mine, width);
      exchange.bytes_from[slot] = builder_.tensor(exchange.outputs[slot]).bytes();
      sums.push_back(exchange.outputs[slot]);
    }
    builder_.add_op(std::move(exchange));
    const int summed = builder_.add_transient(name + ".products", mine, width);
    Op add;
    add.kind = OpKind::add_partials;
    add.label = name + ".add_partials";
    add.inputs = sums;
    add.outputs = {summed};
    add.memory_bytes = static_cast<std::int64_t>(sums.size() + 1) * builder_.tensor(summed).bytes();
    builder_.add_op(std::move(add));
    // This rank's nodes in [begin, end) sit at consecutive places of its owned list.
    const std::int64_t first = owned_position(static_cast<NodeId>(begin));
    parts.push_back(builder_.add_index(name + ".positions", iota_index(first, first + mine)));
    parts.push_back(summed);
  }
  return scatter("layer0.products", static_cast<std::int64_t>(s_.share.owned.size()), width,
                 std::move(parts), false);
}

// A layer that multiplied first: the aggregation of the sources' products (GraphSAGE: plus the
// destinations' self products), with the bias.
int PlanWriter::combine(int l, std::size_t k, std::size_t c, int input, int products) {
  const Chunk& part = chunk(k, c);
  const Block& block = *part.block;
  const LayerShape& shape = model_.layer(l);
  const std::string label = "layer" + std::to_string(l) + ".chunk" + std::to_string(c);
  const int block_tensor = builder_.add_block(label + ".block", part.block);
  Op op;
  op.kind = OpKind::aggregate_transformed;
  op.label = label + ".aggregate";
  op.set_input(Input::block, block_tensor);
  op.set_input(Input::products, input);
  op.layer = l;
  const bool sage = model_.kind() == ModelKind::sage;
  if (sage) {
    std::vector<std::int32_t> own(
        block.src_nodes.begin(),
        block.src_nodes.begin() + static_cast<std::ptrdiff_t>(block.num_dst));
    op.set_input(Input::self_products, gather({products, 0, shape.out_dim}, own, label + ".self"));
  }
  const int output = builder_.add_transient(label + ".output", block.num_dst, shape.out_dim);
  op.outputs = {output};
  if (shape.bias) op.parameters = {parameter_name(l, "b")};
  const std::int64_t terms = block.num_edges() + (model_.gcn_normalised() ? block.num_dst : 0);
  // GraphSAGE's self term is one addition per output entry: memory-bound, in the bytes.
  op.sparse_flops = 2.0 * static_cast<double>(terms) * shape.out_dim;
  op.sparse_entries = terms;
  op.flops = op.sparse_flops;
  op.memory_bytes = (sage ? 2 : 1) * builder_.tensor(output).bytes();
  // Every term reads a row of the products where the block points.
  op.gathered_rows = terms;
  op.gathered_table_bytes = builder_.tensor(input).bytes();
  builder_.add_op(std::move(op));
  return output;
}

int PlanWriter::forward(int l, std::size_t k, std::size_t c, int input) {
  const Chunk& part = chunk(k, c);
  const Block& block = *part.block;
  const std::string label = "layer" + std::to_string(l) + ".chunk" + std::to_string(c);
  const int block_tensor = builder_.add_block(label + ".block", part.block);
  const int output =
      builder_.add_transient(label + ".output", block.num_dst, model_.layer(l).out_dim);
  Op op;
  op.kind = OpKind::layer_forward;
  op.label = label + ".forward";
  op.set_input(Input::block, block_tensor);
  op.set_input(Input::tensor, input);
  op.outputs = {output};
  op.layer = l;
  set_layer_work(op, model_.forward_work(l, block.num_dst, block.num_src(), block.num_edges()));
  builder_.add_op(std::move(op));
  return output;
}

int PlanWriter::scatter(const std::string& name, std::int64_t rows, std::int64_t cols,
                        std::vector<int> pairs, bool keep) {
  const int output =
      keep ? builder_.add_dense(name, rows, cols) : builder_.add_transient(name, rows, cols);
  builder_.add_op(
      scatter_rows_op(builder_, "assemble " + name, std::move(pairs), output, Stream::compute));
  return output;
}

}  // namespace

Plan EvaluationPlanner::plan(const Announcement& received) const {
  if (static_cast<int>(received.size()) != state_->num_ranks) {
    throw Error("evaluation planning needs one announcement per rank, got " +
                std::to_string(received.size()));
  }
  return PlanWriter(*state_, received).write();
}

}  // namespace gnnbed
