// The probe kernel of ProbeKernelClock: one thread spins on %globaltimer (nanoseconds) and
// counts its own SM's clock64 cycles meanwhile, so cycles / ns is the SM clock.
#include <cstdint>

#include "src/device/cuda_check.hpp"
#include "src/measure/global_timer.cuh"
#include "src/measure/sm_clock.hpp"

namespace nvfp4 {

namespace {

__global__ void clock_probe_kernel(uint64_t spin_ns, unsigned long long* out) {
  const uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  uint64_t t = t0;
  while (t - t0 < spin_ns) t = global_timer_ns();
  const long long c1 = clock64();
  out[0] = t - t0;
  out[1] = static_cast<unsigned long long>(c1 - c0);
}

}  // namespace

ProbeKernelClock::ProbeKernelClock(uint64_t spin_ns)
    : spin_ns_(spin_ns), out_(2 * sizeof(unsigned long long)) {}

std::optional<double> ProbeKernelClock::read_mhz(cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(spin_ns_, out_.get<unsigned long long>());
  NVFP4_CUDA_CHECK_LAUNCH();
  unsigned long long v[2] = {0, 0};
  NVFP4_CUDA_CHECK(cudaMemcpyAsync(v, out_.get(), sizeof v, cudaMemcpyDeviceToHost, stream));
  NVFP4_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (v[0] == 0) return std::nullopt;
  return double(v[1]) / double(v[0]) * 1e3;  // cycles per ns -> MHz
}

}  // namespace nvfp4
