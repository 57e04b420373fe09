#include "src/measure/stream_hold.hpp"

#include "src/device/cuda_check.hpp"
#include "src/measure/global_timer.cuh"

namespace nvfp4 {

namespace {

__global__ void hold_kernel(volatile int* flags, uint64_t timeout_ns) {
  const uint64_t t0 = global_timer_ns();
  while (flags[0] == 0) {
    if (global_timer_ns() - t0 > timeout_ns) {
      flags[1] = 1;
      return;
    }
  }
}

}  // namespace

StreamHold::StreamHold(uint64_t timeout_ns) : timeout_ns_(timeout_ns) {
  void* host = nullptr;
  NVFP4_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  flags_ = static_cast<volatile int*>(host);
  flags_[0] = flags_[1] = 0;
  NVFP4_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), host, 0));
}

StreamHold::~StreamHold() {
  if (flags_) (void)cudaFreeHost(const_cast<int*>(flags_));
}

void StreamHold::hold(cudaStream_t stream) {
  flags_[0] = 0;
  flags_[1] = 0;
  hold_kernel<<<1, 1, 0, stream>>>(device_flags_, timeout_ns_);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void StreamHold::release() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  flags_[0] = 1;
}

bool StreamHold::timed_out() const { return flags_[1] != 0; }

}  // namespace nvfp4
