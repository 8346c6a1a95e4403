// The MPI transport, run under mpiexec with 1 to 4 ranks (every rank runs every test): each
// collective delivers exactly what was sent, counts exactly the payload bytes its schedule
// predicts under the traffic kind it was given, and consecutive calls never mix their messages.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "exec/mpi/mpi_transport.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

std::size_t index(int i) { return static_cast<std::size_t>(i); }

std::vector<std::byte> make_payload(std::uint64_t seed, int from, int to, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>(hash_mix(seed, from, to, i) & 0xffU);
  }
  return bytes;
}

// Sizes of what `from` sends `to`: one payload over 1 MiB, some empty, the rest all different.
std::size_t pair_size(int from, int to, int num_ranks, int round) {
  if (from == 0 && to == num_ranks - 1) return (std::size_t{1} << 20) + 17 + index(round);
  if (from % 2 == 1 && to == (from + 1) % num_ranks) return 0;
  return index(1 + 37 * from + 101 * to + 7 * round);
}

std::vector<std::span<const std::byte>> spans_of(const std::vector<std::vector<std::byte>>& all) {
  std::vector<std::span<const std::byte>> spans;
  for (const auto& payload : all) spans.emplace_back(payload);
  return spans;
}

// One all-to-all of pair_size payloads, checked for content; adds the bytes this rank should
// have sent and received to the expectations.
void check_all_to_all(MpiTransport& transport, std::uint64_t seed, int round, Traffic kind,
                      TrafficBytes& expected_sent, TrafficBytes& expected_received) {
  const int n = transport.size();
  const int r = transport.rank();
  std::vector<std::vector<std::byte>> send(index(n));
  for (int q = 0; q < n; ++q) {
    send[index(q)] = make_payload(seed, r, q, pair_size(r, q, n, round));
    if (q != r) expected_sent[kind] += static_cast<std::int64_t>(send[index(q)].size());
  }
  TransferTiming timing;
  const auto received = transport.all_to_all(spans_of(send), kind, timing);
  ASSERT_EQ(received.size(), index(n));
  for (int q = 0; q < n; ++q) {
    if (q == r) {
      EXPECT_TRUE(received[index(q)].empty());
      continue;
    }
    const std::size_t size = pair_size(q, r, n, round);
    ASSERT_EQ(received[index(q)].size(), size) << "from rank " << q << " round " << round;
    EXPECT_TRUE(received[index(q)] == make_payload(seed, q, r, size))
        << "from rank " << q << " round " << round;
    expected_received[kind] += static_cast<std::int64_t>(size);
  }
}

std::size_t gather_size(int rank, int round) {
  if (rank == 0) return (std::size_t{1} << 20) + 5 + index(round);
  if (rank % 2 == 1) return 0;
  return index(1000 + 13 * rank + round);
}

void check_all_gather(MpiTransport& transport, std::uint64_t seed, int round, Traffic kind,
                      TrafficBytes& expected_sent, TrafficBytes& expected_received) {
  const int n = transport.size();
  const int r = transport.rank();
  const auto mine = make_payload(seed, r, -1, gather_size(r, round));
  TransferTiming timing;
  const auto received = transport.all_gather(mine, kind, timing);
  ASSERT_EQ(received.size(), index(n));
  std::vector<std::int64_t> sizes;
  for (int q = 0; q < n; ++q) {
    const std::size_t size = gather_size(q, round);
    sizes.push_back(static_cast<std::int64_t>(size));
    ASSERT_EQ(received[index(q)].size(), size) << "block of rank " << q << " round " << round;
    EXPECT_TRUE(received[index(q)] == make_payload(seed, q, -1, size))
        << "block of rank " << q << " round " << round;
  }
  expected_sent[kind] += ring_all_gather_bytes_sent(r, sizes);
  expected_received[kind] += ring_all_gather_bytes_received(r, sizes);
}

// Small integers, so that any summation order gives the exact sum.
float small_integer(std::uint64_t seed, int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>(hash_mix(seed, rank, i) % 2001U) - 1000);
}

void check_all_reduce(MpiTransport& transport, std::uint64_t seed, std::size_t num_elements,
                      Traffic kind, TrafficBytes& expected_sent, TrafficBytes& expected_received) {
  const int n = transport.size();
  const int r = transport.rank();
  std::vector<float> data(num_elements);
  for (std::size_t i = 0; i < num_elements; ++i) data[i] = small_integer(seed, r, i);
  TransferTiming timing;
  transport.all_reduce_sum(data, kind, timing);
  std::size_t mismatches = 0;
  std::size_t first_mismatch = 0;
  for (std::size_t i = 0; i < num_elements; ++i) {
    float sum = 0;
    for (int q = 0; q < n; ++q) sum += small_integer(seed, q, i);
    if (data[i] != sum && mismatches++ == 0) first_mismatch = i;
  }
  EXPECT_EQ(mismatches, 0U) << "first wrong element " << first_mismatch << " of " << num_elements;
  const auto elements = static_cast<std::int64_t>(num_elements);
  expected_sent[kind] += ring_all_reduce_elements_sent(r, n, elements) * 4;
  expected_received[kind] += ring_all_reduce_elements_received(r, n, elements) * 4;
}

TEST(MpiTransport, ReportsRankAndSizeOfItsCommunicator) {
  MpiTransport transport;
  int world_rank = -1;
  int world_size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  EXPECT_EQ(transport.rank(), world_rank);
  EXPECT_EQ(transport.size(), world_size);
  EXPECT_EQ(transport.bytes_sent(), TrafficBytes{});
  EXPECT_EQ(transport.bytes_received(), TrafficBytes{});
}

TEST(MpiTransport, AllToAllDeliversEveryPayloadAndCountsItsBytes) {
  MpiTransport transport;
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  check_all_to_all(transport, 11, 0, Traffic::features, expected_sent, expected_received);
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
  // A second call under another kind adds to that kind only.
  check_all_to_all(transport, 12, 1, Traffic::structure, expected_sent, expected_received);
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
  if (transport.size() > 1) {
    EXPECT_GT(transport.sum_over_ranks(transport.bytes_sent()[Traffic::features]), 0);
    EXPECT_GT(transport.sum_over_ranks(transport.bytes_received()[Traffic::structure]), 0);
  }
  EXPECT_EQ(transport.bytes_sent()[Traffic::gradients], 0);
}

TEST(MpiTransport, AllToAllOfEmptyPayloadsCompletesAndCountsNothing) {
  MpiTransport transport;
  const int n = transport.size();
  const std::vector<std::vector<std::byte>> empty(index(n));
  TransferTiming timing;
  const auto received = transport.all_to_all(spans_of(empty), Traffic::activations, timing);
  ASSERT_EQ(received.size(), index(n));
  for (const auto& payload : received) EXPECT_TRUE(payload.empty());
  EXPECT_EQ(transport.bytes_sent(), TrafficBytes{});
  EXPECT_EQ(transport.bytes_received(), TrafficBytes{});
}

// Within machines of two ranks (one machine per rank where they do not pair up): every rank's
// payload reaches its mate and nothing else moves; a payload for another machine is refused
// before anything is sent.
TEST(MpiTransport, AllToAllWithinMachinesExchangesOnlyWithMates) {
  MpiTransport transport;
  const int n = transport.size();
  const int r = transport.rank();
  const int g = n % 2 == 0 ? 2 : 1;
  const auto mate = [g](int rank) { return g == 2 ? rank ^ 1 : rank; };
  std::vector<std::vector<std::byte>> send(index(n));
  if (mate(r) != r) send[index(mate(r))] = make_payload(21, r, mate(r), index(100 + r));
  TransferTiming timing;
  std::vector<std::vector<std::byte>> received;
  transport.all_to_all_within_machine_into(spans_of(send), received, Traffic::structure, timing, g);
  ASSERT_EQ(received.size(), index(n));
  std::int64_t expected = 0;
  for (int q = 0; q < n; ++q) {
    if (q == mate(r) && q != r) {
      EXPECT_TRUE(received[index(q)] == make_payload(21, q, r, index(100 + q)));
      expected = 100 + q;
    } else {
      EXPECT_TRUE(received[index(q)].empty()) << "from rank " << q;
    }
  }
  EXPECT_EQ(transport.bytes_received()[Traffic::structure], expected);
  EXPECT_EQ(transport.bytes_sent()[Traffic::structure], mate(r) != r ? 100 + r : 0);
  if (n > g) {
    send[index((r + g) % n)] = make_payload(22, r, 0, 8);
    EXPECT_THROW(transport.all_to_all_within_machine_into(spans_of(send), received,
                                                          Traffic::structure, timing, g),
                 Error);
  }
}

TEST(MpiTransport, AllToAllRejectsAWrongNumberOfPayloadsBeforeTalking) {
  MpiTransport transport;
  const std::vector<std::vector<std::byte>> too_many(index(transport.size() + 1));
  TransferTiming timing;
  try {
    transport.all_to_all(spans_of(too_many), Traffic::features, timing);
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("payloads for " + std::to_string(transport.size())),
              std::string::npos)
        << error.what();
  }
  // Nothing was sent, so the next call still pairs up correctly.
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  check_all_to_all(transport, 13, 2, Traffic::features, expected_sent, expected_received);
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
}

// An address range of more than INT_MAX bytes that costs no memory: the transport must refuse it
// before touching it.
class HugeRange {
 public:
  explicit HugeRange(std::size_t bytes) : bytes_(bytes) {
    address_ = mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (address_ == MAP_FAILED) throw SystemError("cannot reserve address space");
  }
  ~HugeRange() { munmap(address_, bytes_); }
  HugeRange(const HugeRange&) = delete;
  HugeRange& operator=(const HugeRange&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(address_); }
  std::size_t size() const { return bytes_; }

 private:
  std::size_t bytes_;
  void* address_;
};

TEST(MpiTransport, MessagesOverIntMaxBytesThrowBeforeAnythingIsSent) {
  MpiTransport transport;
  const int n = transport.size();
  const HugeRange huge(std::size_t{INT_MAX} + 1);
  const std::span<const std::byte> too_big(huge.data(), huge.size());
  TransferTiming timing;

  std::vector<std::span<const std::byte>> send(index(n), too_big);
  if (n > 1) {
    try {
      transport.all_to_all(send, Traffic::features, timing);
      ADD_FAILURE() << "no exception";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("2147483648 bytes exceeds"), std::string::npos)
          << error.what();
    }
  } else {
    // A rank's payload for itself is never sent.
    EXPECT_TRUE(transport.all_to_all(send, Traffic::features, timing)[0].empty());
  }
  EXPECT_THROW(transport.all_gather(too_big, Traffic::features, timing), Error);

  const std::size_t floats = (std::size_t{INT_MAX} / sizeof(float) + 1) * index(n);
  const HugeRange huge_floats(floats * sizeof(float));
  const std::span<float> too_many_floats(reinterpret_cast<float*>(huge_floats.data()), floats);
  if (n > 1) {
    EXPECT_THROW(transport.all_reduce_sum(too_many_floats, Traffic::gradients, timing), Error);
  } else {
    transport.all_reduce_sum(too_many_floats, Traffic::gradients, timing);  // nothing to do
  }
  EXPECT_EQ(transport.bytes_sent(), TrafficBytes{});

  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  check_all_to_all(transport, 14, 3, Traffic::features, expected_sent, expected_received);
  EXPECT_EQ(transport.bytes_received(), expected_received);
}

TEST(MpiTransport, AllGatherDeliversEveryBlockAndCountsRingBytes) {
  MpiTransport transport;
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  check_all_gather(transport, 21, 0, Traffic::weights, expected_sent, expected_received);
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
  if (transport.size() > 1) {
    EXPECT_GT(transport.sum_over_ranks(expected_sent[Traffic::weights]), 0);
  }
}

TEST(MpiTransport, AllReduceSumsExactlyAndCountsRingBytes) {
  MpiTransport transport;
  const int n = transport.size();
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  for (const std::size_t num_elements :
       {std::size_t{0}, std::size_t{1}, index(n - 1), index(n + 1), std::size_t{1000003}}) {
    SCOPED_TRACE("num_elements " + std::to_string(num_elements));
    check_all_reduce(transport, 31 + num_elements, num_elements, Traffic::gradients, expected_sent,
                     expected_received);
    EXPECT_EQ(transport.bytes_sent(), expected_sent);
    EXPECT_EQ(transport.bytes_received(), expected_received);
  }
  if (n > 1) {
    const auto total_sent = transport.sum_over_ranks(expected_sent[Traffic::gradients]);
    const std::int64_t elements = 0 + 1 + (n - 1) + (n + 1) + 1000003;
    EXPECT_EQ(total_sent, 2 * (n - 1) * elements * 4);
  }
}

// Machines of g ranks where the world divides into them (hierarchical), one ring otherwise; the
// blocking and the started call, with the bytes of the schedule.
TEST(MpiTransport, HierarchicalAllReduceSumsExactlyAndCountsItsScheduleBytes) {
  MpiTransport transport;
  const int n = transport.size();
  const int r = transport.rank();
  for (const int g : {1, 2, 3}) {
    for (const bool started : {false, true}) {
      SCOPED_TRACE("machines of " + std::to_string(g) + (started ? ", started" : ", blocking"));
      const std::size_t num_elements = 1009;
      std::vector<float> data(num_elements);
      for (std::size_t i = 0; i < num_elements; ++i) data[i] = small_integer(g, r, i);
      const TrafficBytes sent_before = transport.bytes_sent();
      const TrafficBytes received_before = transport.bytes_received();
      TransferTiming timing;
      if (started) {
        auto pending = transport.start_all_reduce_sum(data, Traffic::gradients, g);
        pending->wait(timing);
        data = pending->reduced();
      } else {
        transport.all_reduce_sum(data, Traffic::gradients, timing, g);
      }
      for (std::size_t i = 0; i < num_elements; ++i) {
        float sum = 0;
        for (int q = 0; q < n; ++q) sum += small_integer(g, q, i);
        ASSERT_EQ(data[i], sum) << "element " << i;
      }
      const auto elements = static_cast<std::int64_t>(num_elements);
      const auto to = all_reduce_elements_to(r, n, g, elements);
      const auto from = all_reduce_elements_from(r, n, g, elements);
      EXPECT_EQ(transport.bytes_sent()[Traffic::gradients] - sent_before[Traffic::gradients],
                4 * std::accumulate(to.begin(), to.end(), std::int64_t{0}));
      EXPECT_EQ(
          transport.bytes_received()[Traffic::gradients] - received_before[Traffic::gradients],
          4 * std::accumulate(from.begin(), from.end(), std::int64_t{0}));
    }
  }
}

TEST(MpiTransport, AllReduceOfRandomFloatsIsBitIdenticalOnEveryRankAndEveryRun) {
  MpiTransport transport;
  const int n = transport.size();
  const int r = transport.rank();
  const std::size_t num_elements = 100003;
  std::vector<float> input(num_elements);
  for (std::size_t i = 0; i < num_elements; ++i) {
    const std::uint64_t bits = hash_mix(41, r, i);
    // Magnitudes spread over many binades, so that the summation order shows in the last bits.
    input[i] = (unit_float(bits) - 0.5f) * std::ldexp(1.0f, static_cast<int>(bits % 24U) - 12);
  }
  std::vector<float> first = input;
  TransferTiming timing;
  transport.all_reduce_sum(first, Traffic::gradients, timing);
  std::vector<float> second = input;
  transport.all_reduce_sum(second, Traffic::gradients, timing);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), num_elements * sizeof(float)), 0);

  const auto everyone = transport.all_gather_control(first);
  ASSERT_EQ(everyone.size(), index(n));
  for (int q = 0; q < n; ++q) {
    ASSERT_EQ(everyone[index(q)].size(), num_elements);
    EXPECT_EQ(std::memcmp(everyone[index(q)].data(), first.data(), num_elements * sizeof(float)), 0)
        << "rank " << q << " ended with other bits than rank " << r;
  }
  // And it is the sum.
  std::size_t far = 0;
  for (std::size_t i = 0; i < num_elements; ++i) {
    double sum = 0;
    double magnitude = 0;
    for (int q = 0; q < n; ++q) {
      const std::uint64_t bits = hash_mix(41, q, i);
      const double value =
          (unit_float(bits) - 0.5f) * std::ldexp(1.0f, static_cast<int>(bits % 24U) - 12);
      sum += value;
      magnitude += std::abs(value);
    }
    if (std::abs(first[i] - sum) > 1e-6 * magnitude) ++far;
  }
  EXPECT_EQ(far, 0U);
}

TEST(MpiTransport, ControlPlaneIsCorrectAndUncounted) {
  MpiTransport transport;
  const int n = transport.size();
  const int r = transport.rank();
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  check_all_to_all(transport, 51, 0, Traffic::features, expected_sent, expected_received);

  transport.barrier();
  EXPECT_EQ(transport.max_over_ranks(1.5 * r - 7), 1.5 * (n - 1) - 7);
  double expected_sum = 0;
  for (int q = 0; q < n; ++q) expected_sum += 0.1 * q + 0.25;
  EXPECT_EQ(transport.sum_over_ranks(0.1 * r + 0.25), expected_sum);
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_EQ(transport.sum_over_ranks(big + r), n * big + n * (n - 1) / 2);

  const std::string text =
      r == 1 ? std::string() : "rank " + std::to_string(r) + std::string(index(r * 3), 'x');
  const auto texts = transport.gather_to_root(text);
  if (r == 0) {
    ASSERT_EQ(texts.size(), index(n));
    for (int q = 0; q < n; ++q) {
      EXPECT_EQ(
          texts[index(q)],
          q == 1 ? std::string() : "rank " + std::to_string(q) + std::string(index(q * 3), 'x'));
    }
  } else {
    EXPECT_TRUE(texts.empty());
  }

  const auto floats_of = [](int q) {
    std::vector<float> values(q % 2 == 0 ? index(q + 2) : 0);
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(q * 100) + static_cast<float>(i);
    return values;
  };
  const auto gathered = transport.all_gather_control(floats_of(r));
  ASSERT_EQ(gathered.size(), index(n));
  for (int q = 0; q < n; ++q) EXPECT_EQ(gathered[index(q)], floats_of(q)) << "rank " << q;

  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
}

TEST(MpiTransport, InterleavedCollectivesNeverMixTheirMessages) {
  MpiTransport transport;
  const int n = transport.size();
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  // No barrier anywhere: fast ranks run ahead into the next calls while slow ones still receive.
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const auto seed = static_cast<std::uint64_t>(100 + round);
    check_all_to_all(transport, seed, round, Traffic::structure, expected_sent, expected_received);
    check_all_gather(transport, seed, round, Traffic::features, expected_sent, expected_received);
    check_all_reduce(transport, seed, index(997 + round * n), Traffic::gradients, expected_sent,
                     expected_received);
    if (round % 2 == 0) {
      const std::vector<std::vector<std::byte>> empty(index(n));
      TransferTiming timing;
      transport.all_to_all(spans_of(empty), Traffic::activations, timing);
    }
    check_all_to_all(transport, seed + 1000, round + 1, Traffic::activations, expected_sent,
                     expected_received);
    check_all_gather(transport, seed + 1000, round + 1, Traffic::weights, expected_sent,
                     expected_received);
  }
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
}

std::vector<std::byte> pattern(int from, int k, std::size_t bytes) {
  std::vector<std::byte> payload(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    payload[i] = static_cast<std::byte>(hash_mix(from, k, i) & 0xff);
  }
  return payload;
}

// Each rank sends three numbered messages to the next rank of a ring while receiving three from
// the previous one, started in the opposite order, with collectives started and finished in
// between: each message arrives whole at the receive of its number, and counts as sent and
// received under its kind.
TEST(MpiTransport, PointToPointMessagesMatchByNumberBesideCollectives) {
  MpiTransport transport;
  const int n = transport.size();
  const int r = transport.rank();
  if (n == 1) {
    // A rank's server beside its own trainer: messages to itself, counted both ways.
    const std::vector<std::byte> payload = pattern(0, 0, 5);
    const auto receive = transport.start_receive(0, 0, 5, Traffic::weights);
    const auto send = transport.start_send(0, 0, payload, Traffic::weights);
    TransferTiming timing;
    send->wait(timing);
    receive->wait(timing);
    EXPECT_EQ(receive->received()[0], payload);
    EXPECT_EQ(transport.bytes_sent()[Traffic::weights], 5);
    EXPECT_EQ(transport.bytes_received()[Traffic::weights], 5);
    return;
  }
  const int next = (r + 1) % n;
  const int previous = (r + n - 1) % n;
  const auto bytes = [](int from, int k) { return index(100 * (from + 1) + 7 * k); };
  std::vector<std::vector<std::byte>> payloads;
  std::vector<std::unique_ptr<PendingTransfer>> sends;
  std::vector<std::unique_ptr<PendingTransfer>> receives;
  TrafficBytes expected_sent;
  TrafficBytes expected_received;
  for (int k = 0; k < 3; ++k) {
    payloads.push_back(pattern(r, k, bytes(r, k)));
    receives.push_back(transport.start_receive(
        previous, 2 - k, static_cast<std::int64_t>(bytes(previous, 2 - k)), Traffic::weights));
    check_all_to_all(transport, 50 + static_cast<std::uint64_t>(k), k, Traffic::structure,
                     expected_sent, expected_received);
    sends.push_back(transport.start_send(next, k, payloads.back(), Traffic::weights));
  }
  TransferTiming timing;
  for (int k = 0; k < 3; ++k) {
    sends[index(k)]->wait(timing);
    receives[index(2 - k)]->wait(timing);
    EXPECT_EQ(receives[index(2 - k)]->received()[index(previous)],
              pattern(previous, k, bytes(previous, k)))
        << "message " << k;
    expected_sent[Traffic::weights] += static_cast<std::int64_t>(bytes(r, k));
    expected_received[Traffic::weights] += static_cast<std::int64_t>(bytes(previous, k));
  }
  EXPECT_EQ(transport.bytes_sent(), expected_sent);
  EXPECT_EQ(transport.bytes_received(), expected_received);
  EXPECT_THROW(transport.start_receive(n, 0, 4, Traffic::weights), Error);
  EXPECT_THROW(transport.start_receive(next, -1, 4, Traffic::weights), Error);
}

TEST(MpiTransport, APointToPointMessageOfAnotherSizeThanExpectedIsAnError) {
  MpiTransport transport;
  if (transport.size() < 2 || transport.rank() > 1) return;
  TransferTiming timing;
  if (transport.rank() == 0) {
    const std::vector<std::byte> payload(10);
    transport.start_send(1, 0, payload, Traffic::weights)->wait(timing);
  } else {
    const auto receive = transport.start_receive(0, 0, 12, Traffic::weights);
    EXPECT_THROW(receive->wait(timing), Error);
  }
}

TEST(MpiTransport, WaitingForALateRankIsReportedAsWaiting) {
  MpiTransport transport;
  const int n = transport.size();
  const std::vector<std::vector<std::byte>> send(index(n), std::vector<std::byte>(64));
  TransferTiming timing;
  transport.barrier();
  if (transport.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  transport.all_to_all(spans_of(send), Traffic::features, timing);
  EXPECT_GE(timing.transfer_seconds, 0.0);
  if (n == 1) {
    EXPECT_EQ(timing.waiting_seconds, 0.0);
  } else if (transport.rank() != 0) {
    // Every other rank receives from rank 0 at some step and cannot get it before it is sent.
    EXPECT_GE(timing.waiting_seconds, 0.15);
  }
  // Calls add to the timing they are given.
  const TransferTiming before = timing;
  transport.all_to_all(spans_of(send), Traffic::features, timing);
  EXPECT_GE(timing.waiting_seconds, before.waiting_seconds);
  EXPECT_GE(timing.transfer_seconds, before.transfer_seconds);
}

TEST(MpiTransport, FailingMpiCallsThrowWithMpisMessage) {
  // Errors on a null communicator are reported through MPI_COMM_WORLD's handler.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  try {
    MpiTransport transport(MPI_COMM_NULL);
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("MPI_Comm_dup failed: "), std::string::npos) << message;
    EXPECT_GT(message.size(), std::string("rank 0: MPI_Comm_dup failed: ").size()) << message;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

TEST(MpiSession, RefusesToInitializeMpiTwice) {
  try {
    const MpiSession session;
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("already initialized"), std::string::npos);
  }
}

// Run as a child job by the test below: rank 1 gives up while the others wait for it forever.
TEST(AbortAllRanks, ChildJob) {
  if (std::getenv("GNNBED_ABORT_CHILD") == nullptr) GTEST_SKIP() << "only run as a child job";
  MpiTransport transport;
  if (transport.rank() == 1) abort_all_ranks("giving up on purpose", 7);
  transport.barrier();
}

TEST(AbortAllRanks, EndsEveryRankOfTheJob) {
  if (std::getenv("GNNBED_ABORT_CHILD") != nullptr) GTEST_SKIP() << "this is the child job";
  MpiTransport transport;
  if (transport.rank() == 0) {
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    ASSERT_GT(length, 0);
    self[length] = '\0';
    // A clean environment: the child is a separate job, not part of this one.
    const auto result = testing::run_command(
        "env -i PATH=\"$PATH\" HOME=\"$HOME\" OMPI_ALLOW_RUN_AS_ROOT=1 "
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GNNBED_ABORT_CHILD=1 timeout 120 mpiexec -n 3 "
        "--oversubscribe " +
        std::string(self) + " --gtest_filter=AbortAllRanks.ChildJob");
    // 124: `timeout` ended a job that hung.
    EXPECT_EQ(result.exit_code, 7) << result.output;
    EXPECT_NE(result.output.find("rank 1: giving up on purpose"), std::string::npos)
        << result.output;
  }
  transport.barrier();
}

// The last rank arrives 2 s late; the others wait 0.2 s without progress and give up.
constexpr auto kLateBy = std::chrono::seconds(2);
constexpr double kShortTimeoutSeconds = 0.2;

TEST(MpiTransport, ACollectiveWithoutProgressEndsAtTheTimeout) {
  MpiTransport transport;
  if (transport.size() < 2) GTEST_SKIP() << "needs a peer";
  if (transport.rank() == transport.size() - 1) {
    std::this_thread::sleep_for(kLateBy);
    transport.barrier();  // completes the barrier the others gave up on
  } else {
    transport.set_progress_timeout(kShortTimeoutSeconds);
    const auto start = std::chrono::steady_clock::now();
    try {
      transport.barrier();
      ADD_FAILURE() << "the barrier completed without the late rank";
    } catch (const ProgressTimeout& error) {
      // The late rank answers no liveness query while it sleeps: it is the one named.
      const std::string message = error.what();
      EXPECT_NE(message.find("waited more than 0.2 s in MPI_Barrier for rank"), std::string::npos)
          << message;
      EXPECT_NE(message.find(std::to_string(transport.size() - 1) + " without progress"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("not answer: stopped, hung, or busy outside MPI"), std::string::npos)
          << message;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, kLateBy) << "it gave up before the peer";
    transport.set_progress_timeout(0);
  }
  transport.barrier();
}

TEST(MpiTransport, AnExchangeWithoutProgressNamesThePeerItWaitedFor) {
  MpiTransport transport;
  if (transport.size() != 2) GTEST_SKIP() << "one peer to name";
  const std::vector<std::byte> payload(16, std::byte{1});
  const std::vector<std::span<const std::byte>> send = {payload, payload};
  std::vector<std::vector<std::byte>> received;
  TransferTiming timing;
  if (transport.rank() == 1) {
    std::this_thread::sleep_for(kLateBy);
    // Rank 0's message is there: this rank's side of the exchange completes.
    transport.all_to_all_into(send, received, Traffic::features, timing);
  } else {
    transport.set_progress_timeout(kShortTimeoutSeconds);
    try {
      transport.all_to_all_into(send, received, Traffic::features, timing);
      ADD_FAILURE() << "the exchange completed without rank 1";
    } catch (const ProgressTimeout& error) {
      EXPECT_NE(std::string(error.what())
                    .find("rank 0 waited more than 0.2 s in MPI_Probe for "
                          "rank 1"),
                std::string::npos)
          << error.what();
    }
    transport.set_progress_timeout(0);
  }
  transport.barrier();
}

// Both ranks wait, each in a different call (rank 0 in a barrier, rank 1 in an exchange): both
// answer the other's liveness query, so the message says deadlock rather than naming a rank.
TEST(MpiTransport, RanksWaitingInDifferentCallsAreReportedAsADeadlock) {
  {
    MpiTransport transport;
    if (transport.size() != 2) GTEST_SKIP() << "two ranks in two calls";
    transport.set_progress_timeout(kShortTimeoutSeconds);
    try {
      if (transport.rank() == 0) {
        transport.barrier();
      } else {
        const std::vector<std::byte> payload(16, std::byte{1});
        std::vector<std::vector<std::byte>> received;
        TransferTiming timing;
        transport.all_to_all_into({payload, payload}, received, Traffic::features, timing);
      }
      ADD_FAILURE() << "rank " << transport.rank() << "'s call completed";
    } catch (const ProgressTimeout& error) {
      EXPECT_NE(std::string(error.what())
                    .find("every rank answers, so none has stopped: the "
                          "ranks wait for each other in different calls"),
                std::string::npos)
          << error.what();
    }
    transport.set_progress_timeout(0);
    if (transport.rank() == 1) transport.barrier();  // completes the barrier rank 0 gave up on
  }
  MpiTransport().barrier();
}

}  // namespace
}  // namespace gnnbed
