#pragma once
// Announcements relayed within machines (Strategy::announcement_relays). A sender's payload for the
// ranks of another machine crosses the network once, to that machine's relay for the sender, which
// forwards it to the machine's other ranks that receive it, as a machine's processes would share
// one copy in host memory. Two exchanges, both in every rank's prologue:
//   1. across: a sender's payload to every receiver of its own machine, and to the relay of every
//      other machine with a receiver;
//   2. within: each relay to each of its mates, the payloads of the senders it relays to that mate
//      in ascending sender order, each as its length (int32) and its values; an exchange among the
//      ranks of each machine only (its pairwise steps), not over every rank.
// P3's first-layer graphs (or their seeds) travel so when its partial results are summed within
// machines (p3_exchanges.hpp): what an owner pushes crosses the network once per machine.
#include <cstdint>
#include <functional>
#include <vector>

#include "strategies/announcement.hpp"

namespace gnnbed {

class AnnouncementRelays {
 public:
  // relay(machine, sender): the rank of `machine` that takes the sender's payload for it, one that
  // receives it itself (-1 when none of the machine does); receives(sender, receiver): whether the
  // receiver gets the sender's payload. Machines of `ranks_per_machine` consecutive ranks.
  AnnouncementRelays(int num_ranks, int ranks_per_machine, std::function<int(int, int)> relay,
                     std::function<bool(int, int)> receives);

  // Exchange 1: what `rank` sends each peer, from what it announces to each (`sent`). Throws Error
  // when it announces different payloads to two ranks of one machine, which one copy cannot carry.
  Announcement across(const Announcement& sent, int rank) const;
  // Exchange 2: what `rank` forwards each of its mates, from what it received in exchange 1.
  Announcement within(const Announcement& received_across, int rank) const;
  // What `rank` received from every sender, from its receipts of both exchanges. Throws Error
  // naming the relay when a forwarded stack does not hold the payloads it should.
  Announcement delivered(const Announcement& received_across, const Announcement& received_within,
                         int rank) const;

  // Exchange 2 runs among the ranks of each machine only: this many consecutive ranks.
  int ranks_per_machine() const { return ranks_per_machine_; }

  // Whether `rank` takes the sender's payload in exchange 1 (from the sender itself).
  bool first_hop(int sender, int rank) const;
  // Payload bytes of exchange 2 to (from) every peer, given every sender's payload as `rank` ends
  // up with it (`delivered`): for plans, which carry the bytes and not the stacks.
  std::vector<std::int64_t> within_bytes_to(const Announcement& delivered, int rank) const {
    return within_bytes(delivered, rank, true);
  }
  std::vector<std::int64_t> within_bytes_from(const Announcement& delivered, int rank) const {
    return within_bytes(delivered, rank, false);
  }

 private:
  int machine_of(int rank) const { return rank / ranks_per_machine_; }
  // The senders (ascending) whose payloads `relay` forwards to `mate` in exchange 2.
  std::vector<int> forwarded(int relay, int mate) const;
  // Exchange 2's bytes per mate: what `rank` forwards to each (`sent`), or each forwards to it.
  std::vector<std::int64_t> within_bytes(const Announcement& delivered, int rank, bool sent) const;

  int num_ranks_;
  int ranks_per_machine_;
  std::function<int(int, int)> relay_;
  std::function<bool(int, int)> receives_;
};

}  // namespace gnnbed
