// Choosing the compute backend and the transport (--device, --transport): names that do not
// exist, and CUDA or NCCL where there is no device (or no CUDA in the build), are configuration
// errors naming the option; ranks take a machine's GPUs round robin. These run everywhere; on a
// machine with a GPU the "no device" cases skip.
#include <gtest/gtest.h>

#include "exec/backends.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// Runs `make` and returns the ConfigError it throws (fails the test when it throws none).
template <typename Make>
ConfigError config_error_of(Make make) {
  try {
    make();
  } catch (const ConfigError& error) {
    return error;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return ConfigError("", "");
}

TEST(DeviceSelection, TheCpuBackendIsAlwaysThere) {
  const auto backend = make_compute_backend("cpu", 3);
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_FALSE(backend->is_gpu());
}

TEST(DeviceSelection, AnUnknownDeviceOrTransportNamesTheOption) {
  const ConfigError device = config_error_of([] { make_compute_backend("tpu", 0); });
  EXPECT_EQ(device.field(), "--device");
  EXPECT_NE(device.problem().find("cpu, cuda"), std::string::npos) << device.what();
  const ConfigError transport = config_error_of(
      [] { make_data_transport("gloo", MPI_COMM_WORLD, 0, "execution.transport"); });
  EXPECT_EQ(transport.field(), "execution.transport");
  EXPECT_NE(transport.problem().find("mpi, nccl"), std::string::npos) << transport.what();
}

TEST(DeviceSelection, CudaAndNcclWithoutADeviceSayWhy) {
  const CudaDevices devices = cuda_devices();
  if (devices.count > 0) GTEST_SKIP() << "this machine has " << devices.count << " CUDA device(s)";
  EXPECT_FALSE(devices.problem.empty());
  if (!cuda_built()) {
    EXPECT_NE(devices.problem.find("no CUDA backend"), std::string::npos) << devices.problem;
  }
  const ConfigError device = config_error_of([] { make_compute_backend("cuda", 0); });
  EXPECT_EQ(device.field(), "--device");
  EXPECT_NE(device.problem().find("needs a CUDA device: " + devices.problem), std::string::npos)
      << device.what();
  // Refused before any MPI call: no MPI is running in this test.
  const ConfigError transport =
      config_error_of([] { make_data_transport("nccl", MPI_COMM_WORLD, 0); });
  EXPECT_EQ(transport.field(), "--transport");
  EXPECT_NE(transport.problem().find("needs a CUDA device"), std::string::npos) << transport.what();
}

TEST(DeviceSelection, RanksOnAMachineShareItsDevicesRoundRobin) {
  EXPECT_EQ(device_for_local_rank(0, 2), 0);
  EXPECT_EQ(device_for_local_rank(1, 2), 1);
  EXPECT_EQ(device_for_local_rank(2, 2), 0);
  EXPECT_EQ(device_for_local_rank(3, 1), 0);
  EXPECT_THROW(device_for_local_rank(0, 0), Error);
}

TEST(DeviceSelection, TheGpuStackVersionIsRecorded) {
  const std::string version = gpu_stack_version();
  if (cuda_built()) {
    EXPECT_NE(version.find("NCCL 2."), std::string::npos) << version;
  } else {
    EXPECT_EQ(version, "none");
  }
}

}  // namespace
}  // namespace gnnbed
