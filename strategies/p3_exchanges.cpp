#include "strategies/p3_exchanges.hpp"

#include <algorithm>
#include <numeric>

#include "strategies/model_ops.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {

std::vector<ColumnRange> columns_computed(const StrategyContext& context, int rank, int owner) {
  const FeatureColumnSplit split(context.feature_dim, context.num_ranks);
  // A rank serves only slices it holds; looking at those alone keeps planning every rank of a
  // thousand linear in the ranks per peer.
  std::vector<int> held = context.feature_replicas.cached(rank);
  held.insert(std::lower_bound(held.begin(), held.end(), rank), rank);
  std::vector<ColumnRange> ranges;
  for (const int part : held) {
    if (split.width(part) == 0 || context.feature_replicas.server(owner, part) != rank) continue;
    if (!ranges.empty() && ranges.back().end == split.begin(part)) {
      ranges.back().end = split.end(part);
    } else {
      ranges.push_back({split.begin(part), split.end(part)});
    }
  }
  return ranges;
}

bool computes_for(const StrategyContext& context, int rank, int owner) {
  return !columns_computed(context, rank, owner).empty();
}

namespace {

std::string rank_name(int rank) { return "rank " + std::to_string(rank); }

}  // namespace

OwnerExchanges::OwnerExchanges(PlanBuilder& builder, const StrategyContext& context, int rank,
                               const std::vector<int>& first_blocks, const Block& own_first,
                               bool within_machines)
    : builder_(builder),
      context_(context),
      rank_(rank),
      first_blocks_(first_blocks),
      own_first_(own_first) {
  if (within_machines) ranks_per_machine_ = relay_machines(context);
}

std::vector<int> OwnerExchanges::outgoing(const std::vector<std::vector<int>>& partials,
                                          const std::string& what) {
  std::vector<int> out(partials.size(), -1);
  for (std::size_t q = 0; q < partials.size(); ++q) {
    if (static_cast<int>(q) == rank_ || partials[q].empty()) continue;
    const std::string batch = rank_name(static_cast<int>(q));
    out[q] = partials[q].size() == 1 ? partials[q].front()
                                     : sum("sum " + what + " for " + batch,
                                           batch + " summed " + what, partials[q], {}, {});
  }
  return out;
}

std::vector<int> OwnerExchanges::pull(const std::string& what, Traffic traffic,
                                      const std::vector<int>& outgoing,
                                      std::int64_t (*rows_of)(const Block&), std::int64_t cols) {
  if (ranks_per_machine_ > 1) return pull_within_machines(what, traffic, outgoing, rows_of, cols);
  return pull_to_owners(what, traffic, outgoing, rows_of(own_first_), cols);
}

std::vector<int> OwnerExchanges::push(const std::string& what, Traffic traffic, int tensor,
                                      std::int64_t cols, std::int64_t (*rows_of)(const Block&)) {
  if (ranks_per_machine_ > 1) return push_within_machines(what, traffic, tensor, cols, rows_of);
  return push_from_owners(what, traffic, tensor, cols, rows_of);
}

std::vector<int> OwnerExchanges::pull_to_owners(const std::string& what, Traffic traffic,
                                                const std::vector<int>& outgoing, std::int64_t rows,
                                                std::int64_t cols) {
  const int num_ranks = context_.num_ranks;
  Op pull = exchange_op("pull " + what, traffic, num_ranks);
  for (int q = 0; q < num_ranks; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    if (outgoing[slot] >= 0) {
      pull.inputs[slot] = outgoing[slot];
      pull.bytes_to[slot] = builder_.tensor(outgoing[slot]).bytes();
    }
    if (computes_for(context_, q, rank_)) {
      pull.outputs[slot] = builder_.add_dense(what + " from " + rank_name(q), rows, cols);
      pull.bytes_from[slot] = rows * cols * kFloatBytes;
    }
  }
  std::vector<int> pulled = pull.outputs;
  builder_.add_op(std::move(pull));
  return pulled;
}

int OwnerExchanges::sum(const std::string& label, const std::string& name,
                        const std::vector<int>& own, const std::vector<int>& pulled,
                        const std::vector<std::string>& bias) {
  std::vector<int> inputs = own;
  for (const int t : pulled) {
    if (t >= 0) inputs.push_back(t);
  }
  if (inputs.empty()) throw Error("p3: a sum of no partial results");
  const TensorSpec& shape = builder_.tensor(inputs.front());
  const int out = builder_.add_dense(name, shape.rows, shape.cols);
  Op sum;
  sum.kind = OpKind::add_partials;
  sum.label = label;
  sum.inputs = std::move(inputs);
  sum.outputs = {out};
  sum.parameters = bias;
  sum.memory_bytes =
      static_cast<std::int64_t>(sum.inputs.size() + 1) * builder_.tensor(out).bytes();
  builder_.add_op(std::move(sum));
  return out;
}

std::vector<int> OwnerExchanges::push_from_owners(const std::string& what, Traffic traffic,
                                                  int tensor, std::int64_t cols,
                                                  std::int64_t (*rows_of)(const Block&)) {
  const int num_ranks = context_.num_ranks;
  Op push = exchange_op("push " + what, traffic, num_ranks);
  for (int q = 0; q < num_ranks; ++q) {
    if (q == rank_) continue;
    const auto slot = static_cast<std::size_t>(q);
    if (computes_for(context_, q, rank_)) {
      push.inputs[slot] = tensor;
      push.bytes_to[slot] = builder_.tensor(tensor).bytes();
    }
    if (first_blocks_[slot] >= 0) {
      push.outputs[slot] =
          builder_.add_dense(what + " from " + rank_name(q), rows_for(q, rows_of), cols);
      push.bytes_from[slot] = builder_.tensor(push.outputs[slot]).bytes();
    }
  }
  std::vector<int> pushed = push.outputs;
  pushed[static_cast<std::size_t>(rank_)] = tensor;
  builder_.add_op(std::move(push));
  return pushed;
}

int machine_relay(const StrategyContext& context, int ranks_per_machine, int machine, int owner) {
  if (machine == owner / ranks_per_machine) return owner;
  const int first = machine * ranks_per_machine;
  const int preferred = first + owner % ranks_per_machine;
  if (computes_for(context, preferred, owner)) return preferred;
  for (int r = first; r < first + ranks_per_machine; ++r) {
    if (computes_for(context, r, owner)) return r;
  }
  return -1;
}

int relay_machines(const StrategyContext& context) {
  const int g = context.ranks_per_machine;
  return g > 1 && g < context.num_ranks ? g : 1;
}

int OwnerExchanges::relay(int machine, int owner) const {
  return machine_relay(context_, ranks_per_machine_, machine, owner);
}

std::vector<int> OwnerExchanges::relayed_batches(int rank, int relay) const {
  std::vector<int> batches;
  for (int b = 0; b < context_.num_ranks; ++b) {
    if (b != rank && computes_for(context_, rank, b) && this->relay(machine_of(rank), b) == relay) {
      batches.push_back(b);
    }
  }
  return batches;
}

std::int64_t OwnerExchanges::rows_for(int owner, std::int64_t (*rows_of)(const Block&)) const {
  if (owner == rank_) return rows_of(own_first_);
  const int block = first_blocks_[static_cast<std::size_t>(owner)];
  if (block < 0) throw Error("p3: no first-layer block of " + rank_name(owner) + "'s batch here");
  return rows_of(*builder_.tensor(block).block);
}

int OwnerExchanges::stack(const std::vector<int>& pieces, const std::string& name) {
  if (pieces.size() == 1) return pieces.front();
  std::int64_t rows = 0;
  std::vector<int> pairs;
  for (const int piece : pieces) {
    // Read before add_index, which may move the builder's tensors.
    const std::int64_t piece_rows = builder_.tensor(piece).rows;
    std::vector<std::int32_t> positions(static_cast<std::size_t>(piece_rows));
    std::iota(positions.begin(), positions.end(), static_cast<std::int32_t>(rows));
    pairs.push_back(builder_.add_index(name + " positions", std::move(positions)));
    pairs.push_back(piece);
    rows += piece_rows;
  }
  const int stacked = builder_.add_dense(name, rows, builder_.tensor(pieces.front()).cols);
  builder_.add_op(scatter_add_op(builder_, "stack " + name, std::move(pairs), stacked));
  return stacked;
}

std::vector<int> OwnerExchanges::split(int stacked, const std::vector<std::int64_t>& rows,
                                       std::int64_t cols, const std::string& name) {
  if (rows.size() == 1) return {stacked};
  std::vector<int> pieces;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::int32_t> positions(static_cast<std::size_t>(rows[i]));
    std::iota(positions.begin(), positions.end(), static_cast<std::int32_t>(begin));
    const int index = builder_.add_index(name + " piece positions", std::move(positions));
    const int piece = builder_.add_dense(name + " piece " + std::to_string(i), rows[i], cols);
    builder_.add_op(gather_rows_op(builder_, "split " + name, index, stacked, piece));
    pieces.push_back(piece);
    begin += rows[i];
  }
  return pieces;
}

std::vector<std::vector<int>> OwnerExchanges::exchange_within_machine(
    const std::string& label, const std::string& what, Traffic traffic,
    const std::vector<int>& tensors, bool toward_relays, std::int64_t (*rows_of)(const Block&),
    std::int64_t cols) {
  const int num_ranks = context_.num_ranks;
  const int first = machine_of(rank_) * ranks_per_machine_;
  Op within = exchange_op(label, traffic, num_ranks);
  std::vector<std::pair<int, std::vector<int>>> incoming;  // (mate, batches of its pieces)
  for (int mate = first; mate < first + ranks_per_machine_; ++mate) {
    if (mate == rank_) continue;
    const auto slot = static_cast<std::size_t>(mate);
    std::vector<int> pieces;
    const std::vector<int> sent =
        toward_relays ? relayed_batches(rank_, mate) : relayed_batches(mate, rank_);
    for (const int b : sent) {
      pieces.push_back(tensors[static_cast<std::size_t>(b)]);
    }
    if (!pieces.empty()) {
      within.inputs[slot] = stack(pieces, what + " for " + rank_name(mate));
      within.bytes_to[slot] = builder_.tensor(within.inputs[slot]).bytes();
    }
    std::vector<int> batches =
        toward_relays ? relayed_batches(mate, rank_) : relayed_batches(rank_, mate);
    if (batches.empty()) continue;
    std::int64_t rows = 0;
    for (const int b : batches) rows += rows_for(b, rows_of);
    within.outputs[slot] = builder_.add_dense(what + " from " + rank_name(mate), rows, cols);
    within.bytes_from[slot] = rows * cols * kFloatBytes;
    incoming.emplace_back(mate, std::move(batches));
  }
  const std::vector<int> received = within.outputs;
  builder_.add_op(std::move(within));
  std::vector<std::vector<int>> by_batch(static_cast<std::size_t>(num_ranks));
  for (const auto& [mate, batches] : incoming) {
    std::vector<std::int64_t> rows;
    for (const int b : batches) rows.push_back(rows_for(b, rows_of));
    const std::vector<int> pieces = split(received[static_cast<std::size_t>(mate)], rows, cols,
                                          what + " from " + rank_name(mate));
    for (std::size_t i = 0; i < batches.size(); ++i) {
      by_batch[static_cast<std::size_t>(batches[i])].push_back(pieces[i]);
    }
  }
  return by_batch;
}

std::vector<int> OwnerExchanges::pull_within_machines(const std::string& what, Traffic traffic,
                                                      const std::vector<int>& outgoing,
                                                      std::int64_t (*rows_of)(const Block&),
                                                      std::int64_t cols) {
  const int num_ranks = context_.num_ranks;
  const int machine = machine_of(rank_);
  // Within the machine: this rank's pieces to the owners and relays among its machine's ranks.
  const std::vector<std::vector<int>> from_mates = exchange_within_machine(
      "pull " + what + " within the machine", what, traffic, outgoing, true, rows_of, cols);
  // Across: the machine's sum of each batch it relays, to the batch's owner.
  Op across = exchange_op("pull " + what + " across machines", traffic, num_ranks);
  for (int b = 0; b < num_ranks; ++b) {
    if (machine_of(b) == machine || relay(machine, b) != rank_) continue;
    const auto slot = static_cast<std::size_t>(b);
    const int own = outgoing[slot];
    across.inputs[slot] =
        from_mates[slot].empty()
            ? own
            : sum("sum " + what + " of the machine for " + rank_name(b),
                  rank_name(b) + " machine's " + what, {own}, from_mates[slot], {});
    across.bytes_to[slot] = builder_.tensor(across.inputs[slot]).bytes();
  }
  const std::int64_t own_rows = rows_of(own_first_);
  for (int m = 0; m < num_ranks / ranks_per_machine_; ++m) {
    const int from = m == machine ? -1 : relay(m, rank_);
    if (from < 0) continue;
    const auto slot = static_cast<std::size_t>(from);
    across.outputs[slot] =
        builder_.add_dense(what + " of machine " + std::to_string(m), own_rows, cols);
    across.bytes_from[slot] = own_rows * cols * kFloatBytes;
  }
  std::vector<int> pulled = from_mates[static_cast<std::size_t>(rank_)];
  for (const int t : across.outputs) {
    if (t >= 0) pulled.push_back(t);
  }
  builder_.add_op(std::move(across));
  return pulled;
}

std::vector<int> OwnerExchanges::push_within_machines(const std::string& what, Traffic traffic,
                                                      int tensor, std::int64_t cols,
                                                      std::int64_t (*rows_of)(const Block&)) {
  const int num_ranks = context_.num_ranks;
  const int machine = machine_of(rank_);
  // Across: the owner's tensor to the relay of every other machine that computes for its batch.
  Op across = exchange_op("push " + what + " across machines", traffic, num_ranks);
  for (int m = 0; m < num_ranks / ranks_per_machine_; ++m) {
    const int to = m == machine ? -1 : relay(m, rank_);
    if (to < 0) continue;
    across.inputs[static_cast<std::size_t>(to)] = tensor;
    across.bytes_to[static_cast<std::size_t>(to)] = builder_.tensor(tensor).bytes();
  }
  std::vector<int> pushed(static_cast<std::size_t>(num_ranks), -1);
  pushed[static_cast<std::size_t>(rank_)] = tensor;
  for (int b = 0; b < num_ranks; ++b) {
    if (machine_of(b) == machine || relay(machine, b) != rank_) continue;
    const auto slot = static_cast<std::size_t>(b);
    across.outputs[slot] =
        builder_.add_dense(what + " from " + rank_name(b), rows_for(b, rows_of), cols);
    across.bytes_from[slot] = builder_.tensor(across.outputs[slot]).bytes();
    pushed[slot] = across.outputs[slot];
  }
  builder_.add_op(std::move(across));
  // Within: the owner's tensor and the relayed ones, to the machine's ranks that compute for them.
  const std::vector<std::vector<int>> from_mates = exchange_within_machine(
      "push " + what + " within the machine", what, traffic, pushed, false, rows_of, cols);
  for (std::size_t b = 0; b < from_mates.size(); ++b) {
    if (!from_mates[b].empty()) pushed[b] = from_mates[b].front();
  }
  return pushed;
}

}  // namespace gnnbed
