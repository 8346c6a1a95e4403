#pragma once
// P3's first-layer exchanges between each mini-batch's owner and the ranks that compute its
// partial results (strategies/p3.cpp): the pull of partial results to the owner, which sums them,
// and the push of what the owner computed from the sum back to them.
//
// Over machines (P3Options::sum_within_machine, distribution.p3_partials "machine"), a batch's
// partial results are summed within each machine before they cross the network, and what the
// owner pushes crosses the network once per machine. For the batch of owner b, machine m's relay
// is its rank with b's local index (or, if that one computes nothing for b, the machine's first
// that does); the owner's own machine sends to b directly. Pull: every rank sends its partial
// results to the relays of its machine, each relay sums its own with its machine's and sends one
// sum to b. Push: b sends to the relay of every machine, which forwards to the machine's ranks
// that compute for b. A rank's pieces for the same peer travel stacked in one message, since an
// exchange carries one tensor per peer. The owner's NIC then carries M - 1 sums instead of the
// partial results of every other rank.
#include <cstdint>
#include <string>
#include <vector>

#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

// Feature columns [begin, end).
struct ColumnRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The columns whose partial activations `rank` computes for `owner`'s mini-batch: the slices it
// serves to `owner`, adjacent ones merged (without caching: the rank's own slice, for every
// owner). Empty when it computes none, as for a rank without columns: with more ranks than
// feature columns, the first layer of every batch runs on the ranks that hold one (or, with
// feature copies, on the members of the owner's group that do).
std::vector<ColumnRange> columns_computed(const StrategyContext& context, int rank, int owner);
bool computes_for(const StrategyContext& context, int rank, int owner);

// The machines P3's exchanges go through (P3Options::sum_within_machine):
// context.ranks_per_machine, or 1 where machines of one rank, or one machine of every rank, have
// nothing to relay.
int relay_machines(const StrategyContext& context);
// The rank of `machine` (of `ranks_per_machine` consecutive ranks) that collects, sums and forwards
// for `owner`'s batch: `owner` itself on its own machine, else the machine's rank with the owner's
// local index, or if that one computes nothing for it the machine's first that does; -1 when no
// rank of the machine computes for it.
int machine_relay(const StrategyContext& context, int ranks_per_machine, int machine, int owner);

class OwnerExchanges {
 public:
  // `first_blocks[q]` is the first-layer block of rank q's mini-batch where this rank computes for
  // it (-1 elsewhere); `own_first` this rank's own. Machines of context.ranks_per_machine when
  // `within_machines`.
  OwnerExchanges(PlanBuilder& builder, const StrategyContext& context, int rank,
                 const std::vector<int>& first_blocks, const Block& own_first,
                 bool within_machines);

  // What this rank sends rank q for q's mini-batch: its one partial result, or the sum of its
  // partial results over several column ranges (-1 when it has none, or q is this rank).
  std::vector<int> outgoing(const std::vector<std::vector<int>>& partials, const std::string& what);

  // Pull: the partial results `outgoing[q]` of every rank for q's mini-batch reach q; this rank
  // receives those of its own mini-batch, rows_of(own block) x `cols` each (over machines: its
  // machine's ranks' and the other machines' sums). Returns them (-1 entries to skip), for sum.
  std::vector<int> pull(const std::string& what, Traffic traffic, const std::vector<int>& outgoing,
                        std::int64_t (*rows_of)(const Block&), std::int64_t cols);

  // The sum of `own` partial results and the `pulled` ones (-1 entries skipped), plus `bias` if
  // any: the owner's, or this rank's over several column ranges before they travel.
  int sum(const std::string& label, const std::string& name, const std::vector<int>& own,
          const std::vector<int>& pulled, const std::vector<std::string>& bias);

  // Push: the owner's `tensor` reaches every rank that computes for its mini-batch, and this rank
  // receives the same from the owners of the mini-batches it computes for, rows_of(their block)
  // x `cols`. Returns them per owner, with `tensor` in this rank's slot.
  std::vector<int> push(const std::string& what, Traffic traffic, int tensor, std::int64_t cols,
                        std::int64_t (*rows_of)(const Block&));

  // Rows of a first-layer block's partial activations and their gradients, and of its GAT scores
  // (the sources', then the destinations').
  static std::int64_t destination_rows(const Block& block) { return block.num_dst; }
  static std::int64_t score_rows(const Block& block) { return block.num_src() + block.num_dst; }

 private:
  std::vector<int> pull_to_owners(const std::string& what, Traffic traffic,
                                  const std::vector<int>& outgoing, std::int64_t rows,
                                  std::int64_t cols);
  std::vector<int> push_from_owners(const std::string& what, Traffic traffic, int tensor,
                                    std::int64_t cols, std::int64_t (*rows_of)(const Block&));
  // One exchange among this rank's machine: to every mate the stack of `tensors[b]` for the
  // batches b this rank relays between itself and that mate, from every mate the pieces of the
  // batches it relays, split. `toward_relays` (the pull): a rank sends relayed_batches(itself,
  // mate); otherwise (the push) the way back, relayed_batches(mate, itself). Returns per batch
  // the pieces received.
  std::vector<std::vector<int>> exchange_within_machine(const std::string& label,
                                                        const std::string& what, Traffic traffic,
                                                        const std::vector<int>& tensors,
                                                        bool toward_relays,
                                                        std::int64_t (*rows_of)(const Block&),
                                                        std::int64_t cols);
  std::vector<int> pull_within_machines(const std::string& what, Traffic traffic,
                                        const std::vector<int>& outgoing,
                                        std::int64_t (*rows_of)(const Block&), std::int64_t cols);
  std::vector<int> push_within_machines(const std::string& what, Traffic traffic, int tensor,
                                        std::int64_t cols, std::int64_t (*rows_of)(const Block&));

  int machine_of(int rank) const { return rank / ranks_per_machine_; }
  // The rank of `machine` that collects, sums and forwards for `owner`'s batch (`owner` itself on
  // its own machine), or -1 when no rank of the machine computes for it.
  int relay(int machine, int owner) const;
  // The batches (ascending) whose partial results `rank` hands to `relay` of its machine in the
  // pull (`relay` relays them, or owns them), and whose pushed tensors `relay` hands back to
  // `rank` in the push.
  std::vector<int> relayed_batches(int rank, int relay) const;
  // Rows of `owner`'s pieces, as rows_of its first-layer block.
  std::int64_t rows_for(int owner, std::int64_t (*rows_of)(const Block&)) const;
  // One tensor of the pieces' rows one after another (the piece itself when alone).
  int stack(const std::vector<int>& pieces, const std::string& name);
  // The pieces of a stacked tensor, `rows[i]` rows each (the tensor itself when alone).
  std::vector<int> split(int stacked, const std::vector<std::int64_t>& rows, std::int64_t cols,
                         const std::string& name);

  PlanBuilder& builder_;
  const StrategyContext& context_;
  int rank_;
  const std::vector<int>& first_blocks_;
  const Block& own_first_;
  int ranks_per_machine_ = 1;  // 1: every rank sends to and receives from the owners directly
};

}  // namespace gnnbed
