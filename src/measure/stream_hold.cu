#include "src/measure/stream_hold.hpp"

#include <algorithm>

#include "src/device/cuda_check.hpp"
#include "src/measure/global_timer.cuh"

namespace nvfp4 {

struct StreamHold::Shared {
  volatile int release;  // host -> device
  int timed_out;         // device -> host, the rest too
  unsigned long long skew_ns, gap_ns;
};

namespace {

constexpr int kHoldThreads = 1024;

// CTA 0's thread 0 waits for the host, the other CTAs' for CTA 0 (on device memory: one reader
// of host memory over the bus). The other threads of every CTA wait at the barrier, issuing
// nothing, while their CTA keeps its share of the SM's threads from any other kernel.
__global__ void __launch_bounds__(kHoldThreads, 2)
    hold_kernel(StreamHold::Shared* sh, unsigned long long* starts, unsigned* arrived,
                volatile unsigned* go, unsigned gen, uint64_t timeout_ns) {
  if (threadIdx.x == 0) {
    const uint64_t t0 = global_timer_ns();
    starts[blockIdx.x] = t0;
    __threadfence();
    atomicAdd(arrived, 1u);
    if (blockIdx.x == 0) {
      uint64_t last = t0, gap = 0;
      int timed_out = 0;
      while (sh->release == 0) {
        const uint64_t now = global_timer_ns();
        gap = now - last > gap ? now - last : gap;
        last = now;
        if (now - t0 > timeout_ns) {
          timed_out = 1;
          break;
        }
      }
      *go = gen;
      __threadfence();
      // Every CTA's start is needed for the skew: wait for the late ones (bounded as well).
      const unsigned want = gen * gridDim.x;
      while (atomicAdd(arrived, 0u) < want && global_timer_ns() - t0 < 2 * timeout_ns) {
      }
      unsigned long long lo = ~0ull, hi = 0;
      for (unsigned b = 0; b < gridDim.x; ++b) {
        const unsigned long long s = *static_cast<volatile unsigned long long*>(starts + b);
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
      }
      sh->skew_ns = hi - lo;
      sh->gap_ns = gap;
      sh->timed_out = timed_out;
      __threadfence_system();
    } else {
      while (*go < gen) __nanosleep(256);
    }
  }
  __syncthreads();
}

}  // namespace

StreamHold::StreamHold(int device_ordinal, uint64_t timeout_ns) : timeout_ns_(timeout_ns) {
  int sms = 0, threads = 0;
  NVFP4_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_ordinal));
  NVFP4_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device_ordinal));
  grid_ = sms * std::max(1, threads / kHoldThreads);
  void* host = nullptr;
  NVFP4_CUDA_CHECK(cudaHostAlloc(&host, sizeof(Shared), cudaHostAllocMapped));
  shared_ = static_cast<Shared*>(host);
  shared_->release = 0;
  shared_->timed_out = 0;
  shared_->skew_ns = shared_->gap_ns = 0;
  NVFP4_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_shared_), host, 0));
  NVFP4_CUDA_CHECK(cudaMalloc(&starts_, sizeof(unsigned long long) * size_t(grid_)));
  NVFP4_CUDA_CHECK(cudaMalloc(&arrived_, 2 * sizeof(unsigned)));
  go_ = arrived_ + 1;
  NVFP4_CUDA_CHECK(cudaMemset(arrived_, 0, 2 * sizeof(unsigned)));
}

StreamHold::~StreamHold() {
  if (starts_) (void)cudaFree(starts_);
  if (arrived_) (void)cudaFree(arrived_);
  if (shared_) (void)cudaFreeHost(shared_);
}

void StreamHold::hold(cudaStream_t stream) {
  shared_->release = 0;
  shared_->timed_out = 0;
  shared_->skew_ns = shared_->gap_ns = 0;
  hold_kernel<<<unsigned(grid_), kHoldThreads, 0, stream>>>(device_shared_, starts_, arrived_, go_,
                                                            ++holds_, timeout_ns_);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void StreamHold::release() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  shared_->release = 1;
}

bool StreamHold::timed_out() const { return shared_->timed_out != 0; }
double StreamHold::start_skew_us() const { return double(shared_->skew_ns) * 1e-3; }
double StreamHold::max_gap_us() const { return double(shared_->gap_ns) * 1e-3; }

}  // namespace nvfp4
