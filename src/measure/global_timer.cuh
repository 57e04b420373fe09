// %globaltimer, the GPU's nanosecond clock, for device code of the measurement layer (the SM
// clock probe, the stream hold's timeout).
#pragma once

#include <cstdint>

namespace nvfp4 {

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace nvfp4
