// Announcements relayed within machines (strategies/announcement_relay.hpp), run in one process:
// both exchanges deliver every sender's payload to every receiver, a payload crosses to another
// machine only towards its relay, the bytes the plans carry are the stacks' bytes, and what
// cannot be relayed (different payloads for one machine, a stack cut short) is refused.
#include <gtest/gtest.h>

#include "strategies/announcement_relay.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr int kMachines = 3;
constexpr int kRanksPerMachine = 2;
constexpr int kRanks = kMachines * kRanksPerMachine;

std::size_t slot(int rank) { return static_cast<std::size_t>(rank); }
int machine_of(int rank) { return rank / kRanksPerMachine; }

// Rank 5 receives nothing from rank 0; every other rank receives every peer's payload. A machine's
// relay for a sender is its rank with the sender's local index, else its first that receives.
bool receives(int sender, int receiver) {
  return sender != receiver && !(sender == 0 && receiver == 5);
}
int relay(int machine, int sender) {
  if (machine == machine_of(sender)) return sender;
  const int first = machine * kRanksPerMachine;
  const int preferred = first + sender % kRanksPerMachine;
  if (receives(sender, preferred)) return preferred;
  for (int r = first; r < first + kRanksPerMachine; ++r) {
    if (receives(sender, r)) return r;
  }
  return -1;
}

AnnouncementRelays relays() {
  return AnnouncementRelays(kRanks, kRanksPerMachine, relay, receives);
}

// Sender s announces 1 + s values, the same to every receiver.
std::vector<Announcement> announcements() {
  std::vector<Announcement> sent;
  for (int s = 0; s < kRanks; ++s) {
    const auto payload =
        std::make_shared<const std::vector<std::int32_t>>(static_cast<std::size_t>(1 + s), 100 * s);
    Announcement a(slot(kRanks));
    for (int q = 0; q < kRanks; ++q) {
      if (receives(s, q)) a.set(slot(q), payload);
    }
    sent.push_back(std::move(a));
  }
  return sent;
}

// What every rank receives from every other, given what each sends each.
std::vector<Announcement> transpose(const std::vector<Announcement>& sent) {
  std::vector<Announcement> received(slot(kRanks), Announcement(slot(kRanks)));
  for (int s = 0; s < kRanks; ++s) {
    for (int q = 0; q < kRanks; ++q) received[slot(q)].set(slot(s), sent[slot(s)].shared(slot(q)));
  }
  return received;
}

TEST(AnnouncementRelays, BothExchangesDeliverEveryPayloadCrossingToEachMachineOnce) {
  const AnnouncementRelays r = relays();
  const std::vector<Announcement> sent = announcements();
  std::vector<Announcement> across;
  for (int s = 0; s < kRanks; ++s) across.push_back(r.across(sent[slot(s)], s));
  for (int s = 0; s < kRanks; ++s) {
    for (int m = 0; m < kMachines; ++m) {
      if (m == machine_of(s)) continue;
      int copies = 0;
      for (int q = m * kRanksPerMachine; q < (m + 1) * kRanksPerMachine; ++q) {
        copies += across[slot(s)][slot(q)].empty() ? 0 : 1;
        EXPECT_EQ(!across[slot(s)][slot(q)].empty(), r.first_hop(s, q)) << s << " to " << q;
      }
      EXPECT_EQ(copies, 1) << "rank " << s << " to machine " << m;
    }
  }
  const std::vector<Announcement> received_across = transpose(across);
  std::vector<Announcement> within;
  for (int q = 0; q < kRanks; ++q) within.push_back(r.within(received_across[slot(q)], q));
  const std::vector<Announcement> received_within = transpose(within);
  for (int q = 0; q < kRanks; ++q) {
    const Announcement delivered =
        r.delivered(received_across[slot(q)], received_within[slot(q)], q);
    for (int s = 0; s < kRanks; ++s) {
      EXPECT_EQ(delivered[slot(s)], sent[slot(s)][slot(q)]) << s << " to " << q;
    }
    // The bytes a plan carries for exchange 2 are the stacks' (forwarded only within machines).
    const std::vector<std::int64_t> to = r.within_bytes_to(delivered, q);
    const std::vector<std::int64_t> from = r.within_bytes_from(delivered, q);
    for (int p = 0; p < kRanks; ++p) {
      EXPECT_EQ(to[slot(p)], static_cast<std::int64_t>(4 * within[slot(q)][slot(p)].size()));
      EXPECT_EQ(from[slot(p)],
                static_cast<std::int64_t>(4 * received_within[slot(q)][slot(p)].size()));
      if (machine_of(p) != machine_of(q)) {
        EXPECT_EQ(to[slot(p)] + from[slot(p)], 0);
      }
    }
  }
  // Rank 4 relays ranks 0 and 2's payloads on machine 2; rank 5 receives only rank 2's: its 3
  // values after their length.
  EXPECT_EQ(within[slot(4)][slot(5)].size(), 4u);
}

TEST(AnnouncementRelays, RefusesWhatOneCopyPerMachineCannotCarry) {
  const AnnouncementRelays r = relays();
  Announcement different(slot(kRanks));
  for (int q = 1; q < kRanks; ++q) {
    different.set(slot(q), std::make_shared<const std::vector<std::int32_t>>(1, q));
  }
  try {
    r.across(different, 0);
    FAIL() << "different payloads for one machine were relayed";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("rank 0 announces to rank 3"), std::string::npos)
        << error.what();
  }
  // Rank 3 relays ranks 1 and 5's payloads to rank 2: a stack cut short after rank 1's is named.
  Announcement across(slot(kRanks));
  Announcement cut(slot(kRanks));
  cut.set(slot(3), std::make_shared<const std::vector<std::int32_t>>(
                       std::vector<std::int32_t>{2, 100, 100, 9}));
  try {
    r.delivered(across, cut, 2);
    FAIL() << "a stack cut short was decoded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("rank 3 forwarded to rank 2 ends before the payload of rank 5"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace gnnbed
