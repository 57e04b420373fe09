#include "src/device/cuda_check.hpp"

#include <fmt/format.h>

namespace nvfp4 {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  const std::string where = fmt::format("{} ({}:{})", expr, file, line);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the non-sticky error so the process can report and go on
    throw runtime_error(fmt::format("out of device memory: {}", where));
  }
  throw runtime_error(fmt::format("CUDA error {} ({}): {}", cudaGetErrorName(err),
                                  cudaGetErrorString(err), where));
}

}  // namespace nvfp4
