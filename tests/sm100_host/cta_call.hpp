// What the host execution hands to one CTA of the kernel (cta_entry.cpp): plain types only, so
// the copies of the kernel built with different planted bugs share no C++ type with each other.
#pragma once

#include <cuda.h>  // CUtensorMap (type only)

#include <cstdint>

namespace nvfp4 {
namespace sm100_host {

struct CtaCall {
  const CUtensorMap *map_a = nullptr, *map_b = nullptr, *map_sfa = nullptr, *map_sfb = nullptr;
  int64_t m = 0, n = 0, k = 0, l = 0;
  int sm_count = 0;
  uint16_t* c = nullptr;
  void* partials = nullptr;
  uint32_t* counters = nullptr;
};

using CtaEntry = void (*)(uint8_t* smem, const CtaCall& call);

// The entry of the kernel built with plant `plant` (0 .. sm100::kKernelPlants).
CtaEntry cta_entry(int plant);

}  // namespace sm100_host
}  // namespace nvfp4
