// The wgmma shared-memory matrix descriptor of both sm90 paths as a typed value with named
// fields, packing to the bits the hardware reads (PTX ISA, "Matrix Descriptor Format" of the
// asynchronous warpgroup MMA). tests/unit/sm90_desc_test.cpp checks it bit for bit on the host.
// Header-only, g++ and nvcc.
#pragma once

#include <cstdint>

#include "src/format/nvfp4.hpp"  // NVFP4_HD

namespace nvfp4::sm90 {

// 64 bits: 0-13 start address >> 4, 16-29 leading dimension byte offset >> 4, 32-45 stride
// dimension byte offset >> 4, 49-51 matrix base offset, 62-63 swizzle mode (0 none, 1 128B,
// 2 64B, 3 32B); the other bits are zero. Each address field is (x & 0x3FFFF) >> 4.
enum class WgmmaSwizzle : uint32_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };

struct WgmmaSmemDesc {
  uint32_t start_addr = 0;   // shared-memory byte address (16-byte aligned)
  uint32_t lbo_bytes = 0;    // leading dimension byte offset
  uint32_t sbo_bytes = 0;    // stride dimension byte offset
  uint32_t base_offset = 0;  // 0 where the swizzle pattern starts 1024-byte aligned
  WgmmaSwizzle swizzle = WgmmaSwizzle::None;

  NVFP4_HD static uint64_t encode(uint32_t bytes) { return (bytes & 0x3FFFFu) >> 4; }
  NVFP4_HD uint64_t pack() const {
    return encode(start_addr) | (encode(lbo_bytes) << 16) | (encode(sbo_bytes) << 32) |
           (uint64_t{base_offset & 7u} << 49) | (uint64_t{static_cast<uint32_t>(swizzle) & 3u} << 62);
  }
  NVFP4_HD static WgmmaSmemDesc unpack(uint64_t v) {
    WgmmaSmemDesc d;
    d.start_addr = static_cast<uint32_t>(v & 0x3FFFu) << 4;
    d.lbo_bytes = static_cast<uint32_t>((v >> 16) & 0x3FFFu) << 4;
    d.sbo_bytes = static_cast<uint32_t>((v >> 32) & 0x3FFFu) << 4;
    d.base_offset = static_cast<uint32_t>((v >> 49) & 7u);
    d.swizzle = static_cast<WgmmaSwizzle>((v >> 62) & 3u);
    return d;
  }
  // The unused bits (14-15, 30-31, 46-48, 52-61) are zero.
  NVFP4_HD static bool reserved_bits_zero(uint64_t v) {
    return ((v >> 14) & 3u) == 0 && ((v >> 30) & 3u) == 0 && ((v >> 46) & 7u) == 0 && ((v >> 52) & 0x3FFu) == 0;
  }
};

// What adding to a packed descriptor moves its start address by `bytes` (16-byte multiples):
// the start address is the low field, and a shared-memory address (< 256 KB) never carries out
// of its 14 bits. How the kernels step along K (k16 = 32 bytes) and between ring stages.
NVFP4_HD uint64_t wgmma_desc_advance(uint32_t bytes) { return bytes >> 4; }

// A K-major fp16 operand tile, 128-byte swizzled: rows of 128 bytes (64 fp16 of K), 8-row core
// groups 1024 bytes apart (SBO); LBO is unused for swizzled K-major layouts and set to 16 bytes
// (field value 1); base offset 0, so the tile starts 1024-byte aligned.
NVFP4_HD WgmmaSmemDesc make_kmajor_sw128_desc(uint32_t smem_addr) {
  WgmmaSmemDesc d;
  d.start_addr = smem_addr;
  d.lbo_bytes = 16;
  d.sbo_bytes = 1024;
  d.swizzle = WgmmaSwizzle::B128;
  return d;
}

}  // namespace nvfp4::sm90
