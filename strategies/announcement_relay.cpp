#include "strategies/announcement_relay.hpp"

#include <utility>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

std::int64_t stacked_bytes(const std::vector<std::int32_t>& payload) {
  return static_cast<std::int64_t>((payload.size() + 1) * sizeof(std::int32_t));
}

std::string rank_name(int rank) { return "rank " + std::to_string(rank); }

}  // namespace

AnnouncementRelays::AnnouncementRelays(int num_ranks, int ranks_per_machine,
                                       std::function<int(int, int)> relay,
                                       std::function<bool(int, int)> receives)
    : num_ranks_(num_ranks),
      ranks_per_machine_(ranks_per_machine),
      relay_(std::move(relay)),
      receives_(std::move(receives)) {
  if (ranks_per_machine < 1 || num_ranks % ranks_per_machine != 0) {
    throw Error("announcement relays: " + std::to_string(num_ranks) +
                " ranks are not whole machines of " + std::to_string(ranks_per_machine));
  }
}

bool AnnouncementRelays::first_hop(int sender, int rank) const {
  if (sender == rank) return false;
  return machine_of(sender) == machine_of(rank) || relay_(machine_of(rank), sender) == rank;
}

Announcement AnnouncementRelays::across(const Announcement& sent, int rank) const {
  Announcement out(static_cast<std::size_t>(num_ranks_));
  for (int first = 0; first < num_ranks_; first += ranks_per_machine_) {
    const int machine = machine_of(first);
    const int relay = machine == machine_of(rank) ? -1 : relay_(machine, rank);
    for (int q = first; q < first + ranks_per_machine_; ++q) {
      const auto slot = static_cast<std::size_t>(q);
      if (q == rank) continue;
      if (machine == machine_of(rank) || q == relay) {
        out.set(slot, sent.shared(slot));
        continue;
      }
      if (sent[slot].empty()) continue;
      const bool carried = relay >= 0 && sent[static_cast<std::size_t>(relay)] == sent[slot];
      if (!carried) {
        throw Error("announcement relays: " + rank_name(rank) + " announces to " + rank_name(q) +
                    " what the relay of its machine (" +
                    (relay < 0 ? std::string("none") : rank_name(relay)) + ") does not receive");
      }
    }
  }
  return out;
}

std::vector<int> AnnouncementRelays::forwarded(int relay, int mate) const {
  std::vector<int> senders;
  if (relay == mate) return senders;
  const int machine = machine_of(mate);
  for (int s = 0; s < num_ranks_; ++s) {
    if (machine_of(s) != machine && relay_(machine, s) == relay && receives_(s, mate)) {
      senders.push_back(s);
    }
  }
  return senders;
}

Announcement AnnouncementRelays::within(const Announcement& received_across, int rank) const {
  Announcement out(static_cast<std::size_t>(num_ranks_));
  const int first = machine_of(rank) * ranks_per_machine_;
  for (int mate = first; mate < first + ranks_per_machine_; ++mate) {
    std::vector<std::int32_t> stack;
    for (const int s : forwarded(rank, mate)) {
      const std::vector<std::int32_t>& payload = received_across[static_cast<std::size_t>(s)];
      stack.push_back(static_cast<std::int32_t>(payload.size()));
      stack.insert(stack.end(), payload.begin(), payload.end());
    }
    if (!stack.empty()) {
      out.set(static_cast<std::size_t>(mate),
              std::make_shared<const std::vector<std::int32_t>>(std::move(stack)));
    }
  }
  return out;
}

Announcement AnnouncementRelays::delivered(const Announcement& received_across,
                                           const Announcement& received_within, int rank) const {
  Announcement out(static_cast<std::size_t>(num_ranks_));
  for (int s = 0; s < num_ranks_; ++s) {
    const auto slot = static_cast<std::size_t>(s);
    if (first_hop(s, rank)) out.set(slot, received_across.shared(slot));
  }
  const int first = machine_of(rank) * ranks_per_machine_;
  for (int relay = first; relay < first + ranks_per_machine_; ++relay) {
    const std::vector<std::int32_t>& stack = received_within[static_cast<std::size_t>(relay)];
    std::size_t at = 0;
    for (const int s : forwarded(relay, rank)) {
      const bool fits = at < stack.size() && stack[at] >= 0 &&
                        static_cast<std::size_t>(stack[at]) <= stack.size() - at - 1;
      if (!fits) {
        throw Error("announcement relays: what " + rank_name(relay) + " forwarded to " +
                    rank_name(rank) + " ends before the payload of " + rank_name(s));
      }
      const auto begin = stack.begin() + static_cast<std::ptrdiff_t>(at + 1);
      const auto end = begin + stack[at];
      out.set(static_cast<std::size_t>(s),
              std::make_shared<const std::vector<std::int32_t>>(begin, end));
      at += 1 + static_cast<std::size_t>(stack[at]);
    }
    if (at != stack.size()) {
      throw Error("announcement relays: what " + rank_name(relay) + " forwarded to " +
                  rank_name(rank) + " holds " + std::to_string(stack.size() - at) +
                  " values beyond the payloads it relays");
    }
  }
  return out;
}

std::vector<std::int64_t> AnnouncementRelays::within_bytes(const Announcement& delivered, int rank,
                                                           bool sent) const {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(num_ranks_), 0);
  const int first = machine_of(rank) * ranks_per_machine_;
  for (int mate = first; mate < first + ranks_per_machine_; ++mate) {
    for (const int s : sent ? forwarded(rank, mate) : forwarded(mate, rank)) {
      bytes[static_cast<std::size_t>(mate)] +=
          stacked_bytes(delivered[static_cast<std::size_t>(s)]);
    }
  }
  return bytes;
}

}  // namespace gnnbed
