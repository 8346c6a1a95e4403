#pragma once
// SANCUS's staleness checks [Peng et al., VLDB 2022; ALGORITHMS.md]: before every epoch each rank
// decides, per layer, whether it broadcasts its block of the layer's input or lets its peers go
// on with the copy they hold, and tells them in its announcement (strategy.hpp), so that every
// rank plans the same transfers. Decentralised, as in SANCUS: no rank decides for another.
//
//   - SCS-E (epochs): every ε + 1 epochs, the first included.
//   - SCS-A (adaptive): our reading of "broadcast at most ε epochs after receiving stale
//     embeddings": a rank counts the epochs since its last broadcast in which it computed a layer
//     with a stale copy of a peer's block (a peer it reads from skipped), and broadcasts once that
//     count reaches ε. Where every rank reads from every other it coincides with SCS-E; a rank
//     whose peers all broadcast, or that reads from none, goes on without broadcasting.
//   - SCS-H (change): a rank broadcasts a block whose relative change (Frobenius norm) since the
//     copy its peers hold exceeds δ. Where ours differs: the plans of an epoch are built before it
//     runs, so the rank cannot measure the block it is about to compute; it predicts its change as
//     the change of the block it computed last, plus that block's step from the one before (the
//     triangle inequality, with the last step standing for the next). The blocks are measured on
//     the host from persistent tensors the plans keep (the block as computed in the last two
//     epochs, and as last sent). The simulator, which has no values, draws the decision instead
//     with the chance SancusOptions::broadcast_fraction.
//
// Whatever the bound, the features (layer 0's input) never change: with skipping they are
// broadcast once, in the run's first plan, and every plan's first epoch broadcasts every layer.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strategies/announcement.hpp"
#include "strategies/sancus.hpp"

namespace gnnbed {

// [layer][rank]: whether the rank broadcasts its block of the layer's input this epoch.
using SancusBroadcasts = std::vector<std::vector<char>>;

// The rank's own decisions for this epoch, per layer (layer 0: the features).
std::vector<char> own_broadcasts(const SancusOptions& options, const StrategyContext& context,
                                 const RankIteration& iteration);

// `halo` (HaloStrategy's announcement) with the rank's decisions in front of every peer's payload.
Announcement with_broadcasts(const Announcement& halo, const std::vector<char>& own, int rank);

// Every rank's decisions, from the rank's own announcement `sent` and what its peers announced,
// and both announcements without them (what HaloPlanner reads).
struct DecodedAnnouncements {
  SancusBroadcasts broadcasts;
  Announcement sent;
  Announcement received;
};
DecodedAnnouncements decode_broadcasts(const Announcement& sent, const Announcement& received,
                                       int rank, int num_layers);

// What the rank carries to its next epoch (Plan::carried_state): per layer, the epochs since its
// last broadcast in which it read a stale copy (SCS-A's count), and this epoch's decisions.
// `reads_from[q]`: whether the rank's halo holds nodes of peer q.
std::vector<std::int32_t> next_sancus_state(const RankIteration& iteration,
                                            const SancusBroadcasts& broadcasts,
                                            const std::vector<char>& reads_from);
// The decisions recorded in a state next_sancus_state returned; empty for an empty state.
SancusBroadcasts broadcasts_in_state(std::span<const std::int32_t> state);

// The persistent tensors SCS-H measures a block's change from: the rank's block of layer
// `layer`'s input as computed in the epochs of one parity (the plans alternate, so that none
// overwrites the block the one before kept), and as last broadcast.
std::string computed_block_name(int layer, int epoch);
std::string sent_block_name(int layer);

// SCS-H's predicted relative change of the next block: (||last - sent|| + ||last - before||) /
// ||sent|| (Frobenius); the step counts 0 where `before` is empty. Infinite where nothing was
// sent yet (or sent is all zero while the rest is not), 0 where all are zero.
double predicted_change(std::span<const float> last, std::span<const float> before,
                        std::span<const float> sent);

}  // namespace gnnbed
