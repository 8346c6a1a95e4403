#pragma once
// Choosing where a rank computes and how it talks: `--device cpu|cuda` and `--transport
// mpi|nccl` of run_experiment and calibrate. Builds without CUDA have every name, and say clearly
// when one cannot be used, so that a CPU-only build needs no CUDA.
#include <mpi.h>

#include <memory>
#include <string>

#include "exec/kernels/compute_backend.hpp"
#include "exec/transport.hpp"

namespace gnnbed {

// Whether this build has the CUDA backend and the NCCL transport (GNNBED_WITH_CUDA found them).
bool cuda_built();

// CUDA devices this process can use, or why there are none (a build without CUDA, no driver, no
// device), with CUDA's own message.
struct CudaDevices {
  int count = 0;
  std::string problem;  // empty when count > 0
};
CudaDevices cuda_devices();

// The GPU a rank uses: ranks on one machine take its devices round robin, so several ranks can
// share one GPU (with MPI transport; see docs/gpu.md for NCCL).
int device_for_local_rank(int local_rank, int device_count);

// This process's rank among the ranks on its machine (MPI_COMM_TYPE_SHARED), collective over
// `communicator`.
int local_rank(MPI_Comm communicator);

// The ranks per machine when every machine (MPI_COMM_TYPE_SHARED group) holds the same number of
// consecutive ranks, 0 when they do not; collective over `communicator`.
int ranks_per_host(MPI_Comm communicator);

// "cpu" or "cuda" (on device_for_local_rank(local_rank, count)). Throws ConfigError naming
// `field` when the device is unknown or unavailable.
std::unique_ptr<ComputeBackend> make_compute_backend(const std::string& device, int local_rank,
                                                     const std::string& field = "--device");

// "mpi" (MpiTransport) or "nccl" (NcclTransport on the rank's GPU), collective over
// `communicator`. Throws ConfigError naming `field` when the transport is unknown or unavailable.
std::unique_ptr<Transport> make_data_transport(const std::string& transport, MPI_Comm communicator,
                                               int local_rank,
                                               const std::string& field = "--transport");

// Library versions of the GPU stack for provenance ("CUDA runtime 13.0, NCCL 2.28.9"), or
// "none" in a build without CUDA.
std::string gpu_stack_version();

}  // namespace gnnbed
