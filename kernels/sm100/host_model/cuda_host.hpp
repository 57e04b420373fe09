// The CUDA built-ins kernels/sm100/kernel.cuh uses, for the host execution: thread indices,
// block and warp barriers, fences, atomics, __trap and printf. Declared in namespace
// nvfp4::sm100 so the kernel's unqualified calls find them; host-compiled CUDA headers supply
// the rest (make_uint4, __float2half_rn, ...).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <vector_functions.h>
#include <vector_types.h>

#include "kernels/sm100/host_model/model.hpp"

namespace nvfp4 {
namespace sm100 {

// Set for each host thread by host_model::launch.
inline thread_local host_model::Index threadIdx, blockIdx, gridDim;

inline void __syncthreads() { host_model::block_barrier(0, 0); }
inline void __syncwarp() { host_model::warp_sync(); }
// The host's memory model is stronger than the GPU's: a full fence orders what the kernel's
// __threadfence orders (and more; docs/kernels.md says what the model cannot see).
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) {
  host_model::lane_op(0xA7);
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline float4 __ldcg(const float4* p) {
  float4 v;
  host_model::global_load(p, &v, sizeof v);
  return v;
}
inline float __uint_as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
[[noreturn]] inline void __trap() { host_model::trap(); }

// The kernel's printf goes to the launch result (Result::output) rather than stdout.
__attribute__((format(printf, 1, 2))) inline int printf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  host_model::kernel_print(buf);
  return n;
}

}  // namespace sm100
}  // namespace nvfp4
