// The GPU engine under mpiexec (labels gpu, mpi): NcclTransport's operations deliver what
// MpiTransport delivers and count the same bytes; one training iteration with the CUDA backend,
// over MPI (ranks may share one GPU) and over NCCL (one GPU per rank), gives the single-process
// loss, gradients and updated weights and moves the plan's bytes. Every test skips without a
// CUDA device; NCCL tests also skip when there are fewer GPUs than ranks (NCCL refuses two ranks
// on one GPU).
#include <gtest/gtest.h>

#include "exec/backends.hpp"
#include "exec/mpi/mpi_transport.hpp"
#include "exec/nccl/nccl_transport.hpp"
#include "tests/support/bundled_workload.hpp"
#include "tests/support/single_process_iteration.hpp"

namespace gnnbed {
namespace {

// The rank's GPU, or a skip message.
int gpu_or_skip(bool one_per_rank, std::string& skip) {
  const CudaDevices devices = cuda_devices();
  if (devices.count == 0) {
    skip = "no CUDA device: " + devices.problem;
    return -1;
  }
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (one_per_rank && devices.count < ranks) {
    skip = "NCCL needs a GPU per rank: " + std::to_string(devices.count) + " for " +
           std::to_string(ranks) + " ranks";
    return -1;
  }
  return device_for_local_rank(local_rank(MPI_COMM_WORLD), devices.count);
}

#define GPU_OR_SKIP(one_per_rank)                                          \
  std::string skip_reason;                                                 \
  [[maybe_unused]] const int gpu = gpu_or_skip(one_per_rank, skip_reason); \
  if (gpu < 0) GTEST_SKIP() << skip_reason

// Rank r sends (r + 1) * (q + 1) * 13 bytes to rank q (nothing to q == r + 1 mod n, so that empty
// payloads are covered), byte i being (r * 31 + q * 7 + i) mod 251.
std::vector<std::vector<std::byte>> payloads(int rank, int size) {
  std::vector<std::vector<std::byte>> send(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q) {
    if (q == rank || (size > 2 && q == (rank + 1) % size)) continue;
    const int bytes = (rank + 1) * (q + 1) * 13;
    for (int i = 0; i < bytes; ++i) {
      send[static_cast<std::size_t>(q)].push_back(
          static_cast<std::byte>((rank * 31 + q * 7 + i) % 251));
    }
  }
  return send;
}

TEST(NcclTransport, EveryOperationDeliversWhatMpiDeliversAndCountsTheSameBytes) {
  GPU_OR_SKIP(true);
  NcclTransport nccl(MPI_COMM_WORLD, gpu);
  MpiTransport mpi;
  const int rank = nccl.rank();
  const int size = nccl.size();
  ASSERT_EQ(rank, mpi.rank());
  TransferTiming timing;

  const auto send = payloads(rank, size);
  std::vector<std::span<const std::byte>> views(send.begin(), send.end());
  std::vector<std::vector<std::byte>> over_nccl;
  nccl.all_to_all_into(views, over_nccl, Traffic::features, timing);
  // Twice, so that reused staging buffers are exercised.
  nccl.all_to_all_into(views, over_nccl, Traffic::features, timing);
  const auto over_mpi = mpi.all_to_all(views, Traffic::features, timing);
  EXPECT_EQ(over_nccl, over_mpi);

  std::vector<std::byte> mine(static_cast<std::size_t>(100 * rank + 5), std::byte{0});
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<std::byte>(rank + i);
  EXPECT_EQ(nccl.all_gather(mine, Traffic::structure, timing),
            mpi.all_gather(mine, Traffic::structure, timing));

  // Small integers: every summation order gives the same floats.
  std::vector<float> nccl_sum(1001), mpi_sum(1001);
  for (std::size_t i = 0; i < nccl_sum.size(); ++i) {
    nccl_sum[i] = mpi_sum[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 17));
  }
  nccl.all_reduce_sum(nccl_sum, Traffic::gradients, timing);
  mpi.all_reduce_sum(mpi_sum, Traffic::gradients, timing);
  EXPECT_EQ(nccl_sum, mpi_sum);
  for (std::size_t i = 0; i < nccl_sum.size(); ++i) {
    ASSERT_EQ(nccl_sum[i], static_cast<float>(size * (size + 1) / 2 * static_cast<int>(i % 17)));
  }

  // MPI ran the all-to-all once, NCCL twice.
  TrafficBytes expected_sent = mpi.bytes_sent();
  expected_sent[Traffic::features] *= 2;
  TrafficBytes expected_received = mpi.bytes_received();
  expected_received[Traffic::features] *= 2;
  EXPECT_EQ(nccl.bytes_sent(), expected_sent);
  EXPECT_EQ(nccl.bytes_received(), expected_received);
}

const Dataset& cora() { return testing::bundled_workload("cora"); }

ExperimentConfig experiment(const std::string& strategy, const std::string& model) {
  ExperimentConfig config;
  config.workload.source = "cora";
  config.model = ModelConfig{model, 2, 16, 0.5};
  config.training.batch_size = 12;
  config.training.fanouts = {10, 5};
  config.training.seed = 4;
  config.distribution.strategy = strategy;
  config.distribution.structure = "partitioned";
  return config;
}

std::string gpu_iteration_name(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& param_info) {
  std::string name = std::get<0>(param_info.param) + "_" + std::get<1>(param_info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class GpuIteration : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GpuIteration, OverMpiGivesTheSingleProcessResults) {
  GPU_OR_SKIP(false);
  const auto& [strategy, model] = GetParam();
  const auto backend = make_compute_backend("cuda", local_rank(MPI_COMM_WORLD));
  MpiTransport transport;
  testing::expect_single_process_iteration(experiment(strategy, model), cora(), transport,
                                           *backend);
}

TEST_P(GpuIteration, OverNcclGivesTheSingleProcessResults) {
  GPU_OR_SKIP(true);
  const auto& [strategy, model] = GetParam();
  const auto backend = make_compute_backend("cuda", local_rank(MPI_COMM_WORLD));
  NcclTransport transport(MPI_COMM_WORLD, gpu);
  testing::expect_single_process_iteration(experiment(strategy, model), cora(), transport,
                                           *backend);
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndModels, GpuIteration,
                         ::testing::Combine(::testing::Values("dgl-pull", "p3"),
                                            ::testing::Values("sage", "gcn", "gat")),
                         gpu_iteration_name);

}  // namespace
}  // namespace gnnbed
