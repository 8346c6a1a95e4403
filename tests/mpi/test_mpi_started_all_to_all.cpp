// The MPI transport's started all-to-all, under mpiexec with 2 and 10 ranks: it posts its
// pairwise steps in blocks (collective_schedule.hpp; 10 ranks make 1 to 9 of them), and every
// payload arrives whole, whether the transfer is completed by waiting or by testing, with its bytes
// counted once.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "exec/mpi/mpi_transport.hpp"

namespace gnnbed {
namespace {

// What `from` sends `to`: a size and bytes of its own for every pair, none to itself.
std::vector<std::byte> payload(int from, int to) {
  if (from == to) return {};
  std::vector<std::byte> bytes(static_cast<std::size_t>(3 + 5 * from + 11 * to));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>((from * 31 + to * 7 + static_cast<int>(i)) & 0xff);
  }
  return bytes;
}

void check_started_all_to_all(bool by_testing, int block_steps) {
  MpiTransport transport;
  const int n = transport.size();
  const int me = transport.rank();
  std::vector<std::vector<std::byte>> send;
  std::vector<std::span<const std::byte>> views;
  std::vector<std::int64_t> receive_bytes;
  std::int64_t sent = 0;
  std::int64_t received = 0;
  for (int q = 0; q < n; ++q) send.push_back(payload(me, q));
  for (int q = 0; q < n; ++q) {
    views.emplace_back(send[static_cast<std::size_t>(q)]);
    receive_bytes.push_back(static_cast<std::int64_t>(payload(q, me).size()));
    sent += static_cast<std::int64_t>(send[static_cast<std::size_t>(q)].size());
    received += receive_bytes.back();
  }
  const auto transfer =
      transport.start_all_to_all(views, receive_bytes, Traffic::features, block_steps);
  if (by_testing) {
    while (!transfer->test()) {
    }
  } else {
    TransferTiming timing;
    transfer->wait(timing);
  }
  for (int q = 0; q < n; ++q) {
    EXPECT_EQ(transfer->received()[static_cast<std::size_t>(q)], payload(q, me)) << "from " << q;
  }
  EXPECT_EQ(transport.bytes_sent()[Traffic::features], sent);
  EXPECT_EQ(transport.bytes_received()[Traffic::features], received);
}

TEST(MpiStartedAllToAll, DeliversEveryPayloadWhenWaitedFor) {
  for (const int block_steps : {0, 1, 3, 8}) check_started_all_to_all(false, block_steps);
}

TEST(MpiStartedAllToAll, DeliversEveryPayloadWhenTestedToTheEnd) {
  for (const int block_steps : {0, 1, 3, 8}) check_started_all_to_all(true, block_steps);
}

}  // namespace
}  // namespace gnnbed
