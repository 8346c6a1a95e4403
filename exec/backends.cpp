#include "exec/backends.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "exec/mpi/mpi_transport.hpp"
#include "workloads/common/errors.hpp"

#ifdef GNNBED_HAVE_CUDA
#include <cuda_runtime.h>

#include "exec/cuda/cuda_backend.hpp"
#include "exec/nccl/nccl_transport.hpp"
#endif

namespace gnnbed {

bool cuda_built() {
#ifdef GNNBED_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

CudaDevices cuda_devices() {
#ifdef GNNBED_HAVE_CUDA
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    return {0, std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(code)};
  }
  if (count == 0) return {0, "no CUDA device is visible to this process"};
  return {count, ""};
#else
  return {0,
          "this build has no CUDA backend (configured with GNNBED_WITH_CUDA=OFF, or CUDA 13 "
          "and NCCL were not found)"};
#endif
}

int device_for_local_rank(int local_rank, int device_count) {
  if (device_count <= 0) throw Error("device_for_local_rank: no devices");
  return local_rank % device_count;
}

namespace {

// The ranks of `communicator` on this process's host (MPI_COMM_TYPE_SHARED); the caller frees it.
MPI_Comm host_communicator(MPI_Comm communicator, const std::string& caller) {
  MPI_Comm host = MPI_COMM_NULL;
  if (MPI_Comm_split_type(communicator, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) !=
      MPI_SUCCESS) {
    throw Error(caller + ": MPI_Comm_split_type failed");
  }
  return host;
}

}  // namespace

int local_rank(MPI_Comm communicator) {
  MPI_Comm host = host_communicator(communicator, "local_rank");
  int rank = 0;
  MPI_Comm_rank(host, &rank);
  MPI_Comm_free(&host);
  return rank;
}

int ranks_per_host(MPI_Comm communicator) {
  // Only the world communicator carries messages: the host's group is read locally (on an
  // emulated cluster, whose namespaces share a host name, collectives on the host communicator
  // hung).
  MPI_Comm host = host_communicator(communicator, "ranks_per_host");
  MPI_Group host_group = MPI_GROUP_NULL;
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Comm_group(host, &host_group);
  MPI_Comm_group(communicator, &world_group);
  int on_host = 0;
  MPI_Group_size(host_group, &on_host);
  std::vector<int> host_ranks(static_cast<std::size_t>(on_host));
  std::vector<int> world_ranks(host_ranks.size());
  std::iota(host_ranks.begin(), host_ranks.end(), 0);
  MPI_Group_translate_ranks(host_group, on_host, host_ranks.data(), world_group,
                            world_ranks.data());
  MPI_Group_free(&host_group);
  MPI_Group_free(&world_group);
  MPI_Comm_free(&host);
  // Regular when every host holds as many ranks, consecutive from a multiple of that number.
  const auto [lowest, highest] = std::minmax_element(world_ranks.begin(), world_ranks.end());
  int regular = *highest - *lowest == on_host - 1 && *lowest % on_host == 0 ? 1 : 0;
  int sizes[2] = {on_host, -on_host};  // largest, -(smallest)
  MPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, communicator);
  MPI_Allreduce(MPI_IN_PLACE, &regular, 1, MPI_INT, MPI_MIN, communicator);
  return regular == 1 && sizes[0] == -sizes[1] ? on_host : 0;
}

namespace {

// The device a rank uses, or ConfigError naming `field` and why there is none.
int usable_device(int local_rank, const std::string& field, const std::string& what) {
  const CudaDevices devices = cuda_devices();
  if (devices.count == 0)
    throw ConfigError(field, what + " needs a CUDA device: " + devices.problem);
  return device_for_local_rank(local_rank, devices.count);
}

}  // namespace

std::unique_ptr<ComputeBackend> make_compute_backend(const std::string& device, int local_rank,
                                                     const std::string& field) {
  if (device == "cpu") return make_cpu_backend();
  if (device == "cuda") {
    // Throws in a build without CUDA (cuda_devices() then reports none, and says why).
    const int gpu = usable_device(local_rank, field, "'cuda'");
#ifdef GNNBED_HAVE_CUDA
    return make_cuda_backend(gpu);
#else
    throw Error("unreachable: device " + std::to_string(gpu) + " in a build without CUDA");
#endif
  }
  throw ConfigError(field, "'" + device + "' is not one of: cpu, cuda");
}

std::unique_ptr<Transport> make_data_transport(const std::string& transport, MPI_Comm communicator,
                                               int local_rank, const std::string& field) {
  if (transport == "mpi") return std::make_unique<MpiTransport>(communicator);
  if (transport == "nccl") {
    const int gpu = usable_device(local_rank, field, "'nccl'");
#ifdef GNNBED_HAVE_CUDA
    return std::make_unique<NcclTransport>(communicator, gpu);
#else
    throw Error("unreachable: device " + std::to_string(gpu) + " in a build without CUDA");
#endif
  }
  throw ConfigError(field, "'" + transport + "' is not one of: mpi, nccl");
}

std::string gpu_stack_version() {
#ifdef GNNBED_HAVE_CUDA
  int runtime = 0;
  const std::string cuda =
      cudaRuntimeGetVersion(&runtime) == cudaSuccess
          ? std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)
          : "unknown";
  return "CUDA runtime " + cuda + ", " + nccl_library_version();
#else
  return "none";
#endif
}

}  // namespace gnnbed
