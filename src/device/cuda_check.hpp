// Every CUDA runtime call goes through NVFP4_CUDA_CHECK: a failure becomes nvfp4::Error with the
// call site, exit code 3 (out of memory included, with a message that says so).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "src/core/error.hpp"

namespace nvfp4 {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

inline void cuda_check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, expr, file, line);
}

}  // namespace nvfp4

#define NVFP4_CUDA_CHECK(expr) ::nvfp4::cuda_check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors show up here, faults at the next sync.
#define NVFP4_CUDA_CHECK_LAUNCH() ::nvfp4::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
