// A kernel that keeps every SM busy for a while: work a test leaves running on another stream.
#include "src/device/cuda_check.hpp"
#include "src/measure/global_timer.cuh"

namespace nvfp4 {

namespace {

__global__ void spin_kernel(uint64_t ns) {
  const uint64_t t0 = global_timer_ns();
  while (global_timer_ns() - t0 < ns) {
  }
}

}  // namespace

void spin_every_sm(cudaStream_t stream, double us) {
  int sms = 0, device = 0;
  NVFP4_CUDA_CHECK(cudaGetDevice(&device));
  NVFP4_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  spin_kernel<<<unsigned(4 * sms), 512, 0, stream>>>(uint64_t(us * 1e3));
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4
