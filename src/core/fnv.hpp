// FNV-1a, 64-bit: over 64-bit words, the hash of the launchers' cache keys
// (src/device/map_cache.hpp, kernels/sm90/launch_graphs.hpp); over bytes (each mixed as one
// word below 256, which is byte-wise FNV-1a exactly), the sweeps' config hash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvfp4 {

struct Fnv64 {
  uint64_t h = 14695981039346656037ull;  // the offset basis, 0xcbf29ce484222325
  void mix(uint64_t v) { h = (h ^ v) * 1099511628211ull; }
  void mix_ptr(const void* p) { mix(reinterpret_cast<uintptr_t>(p)); }
  size_t value() const { return static_cast<size_t>(h); }
};

}  // namespace nvfp4
