#pragma once
// The CUDA implementation of ComputeBackend: cuBLAS for dense products, the kernels of
// cuda_kernels.cuh for the rest, one CUDA stream per backend.
//
// Operands arrive as host matrices (the ComputeBackend contract, docs/gpu.md): each call copies
// its inputs into device buffers that persist across calls, runs on the device and copies its
// outputs back before returning. That makes every plan op runnable on a GPU with the CPU path's
// numbers, but it is not yet a device-resident engine: the copies are inside each op's time.
#include <memory>

#include "exec/kernels/compute_backend.hpp"

namespace gnnbed {

// A backend on CUDA device `device` (made current for the calling thread). Throws Error when the
// device cannot be used, with CUDA's reason.
std::unique_ptr<ComputeBackend> make_cuda_backend(int device);

}  // namespace gnnbed
