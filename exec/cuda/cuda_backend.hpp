#pragma once
// The CUDA implementation of ComputeBackend: cuBLAS for dense products, the kernels of
// cuda_kernels.cuh for the rest, one CUDA stream per backend.
//
// Matrices stay on the device between kernels (exec/tensor.hpp, cuda_storage.hpp): a kernel
// uploads an operand only when the host holds newer values, and writes its results to the device
// copy alone. Host code that reads a result downloads it then.
#include <memory>

#include "exec/kernels/compute_backend.hpp"

namespace gnnbed {

// A backend on CUDA device `device` (made current for the calling thread). Throws Error when the
// device cannot be used, with CUDA's reason.
std::unique_ptr<ComputeBackend> make_cuda_backend(int device);

}  // namespace gnnbed
