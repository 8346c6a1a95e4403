#pragma once
// cuBLAS status checking, shared by the CUDA backend and the GPU benchmark.
#include <cublas_v2.h>

#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed::cuda {

// Throws gnnbed::Error "<call> failed: <cuBLAS's message>" unless `status` is success.
inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + cublasGetStatusString(status));
}

}  // namespace gnnbed::cuda
