// Operand generation shared by the GPU generator and its host twin: a counter-based hash of
// (seed, tensor, index), so every 16-element block is produced independently and identically
// on either side. Only exact float arithmetic (integer sums, power-of-two scaling, correctly
// rounded division) is used, which makes host and device results bit-identical.
#pragma once

#include <cstdint>

#include "src/format/nvfp4.hpp"

namespace nvfp4 {

enum class Dist : int {
  GpuMode = 0,  // uniform bytes, scales from {0,1,2,3} (the GPU MODE reference)
  Normal = 1,   // N(0,1) data quantized per block: scale = e4m3(amax/6), values to E2M1
};

enum class TensorId : uint32_t { A = 0, B = 1 };

// splitmix64 finalizer: a strong 64-bit mixer, cheap on both sides.
NVFP4_HD uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The per-tensor key of random_bits: one per (seed, tensor), so a generator computes it once.
NVFP4_HD uint64_t random_key(uint64_t seed, TensorId t) {
  return mix64(seed ^ (0xA0761D6478BD642Full * (static_cast<uint64_t>(t) + 1)));
}

// 64 random bits for (key, block index, draw number within the block).
NVFP4_HD uint64_t random_bits_keyed(uint64_t key, uint64_t block, uint32_t draw) {
  return mix64(mix64(key ^ mix64(block)) + 0xE7037ED1A0B428DBull * (draw + 1u));
}

// 64 random bits for (seed, tensor, block index, draw number within the block).
NVFP4_HD uint64_t random_bits(uint64_t seed, TensorId t, uint64_t block, uint32_t draw) {
  return random_bits_keyed(random_key(seed, t), block, draw);
}

// An approximately standard normal value from 12 uniform 16-bit draws (Irwin-Hall): the sum
// minus its mean is an exact integer and 2^-16 scaling is exact, so z is identical everywhere.
// Its standard deviation is 1 - 2^-33 and |z| < 6.
NVFP4_HD float irwin_hall_normal(uint64_t r0, uint64_t r1, uint64_t r2) {
  int32_t sum = 0;
  const uint64_t rs[3] = {r0, r1, r2};
  for (int w = 0; w < 3; ++w)
    for (int s = 0; s < 4; ++s) sum += static_cast<int32_t>((rs[w] >> (16 * s)) & 0xFFFFu);
  // mean of the sum = 12 * 65535 / 2 = 393210
  return static_cast<float>(sum - 393210) * (1.0f / 65536.0f);
}

// Device code keeps the normal distribution's loops over a block rolled: the generator runs
// between timed windows, and unrolled (~42 KB of SASS) it evicts the timed kernel's code from the
// instruction cache (docs/cli.md, "What it costs"). The values are the same either way.
#if defined(__CUDA_ARCH__)
#define NVFP4_DEVICE_ROLLED _Pragma("unroll 1")
#else
#define NVFP4_DEVICE_ROLLED
#endif

// Generates one 16-element block: 8 packed bytes and its E4M3 scale byte.
// `block` is the linear block index ((batch * rows + row) * kblocks + kb); `key` is random_key(seed, t).
NVFP4_HD void generate_block_keyed(Dist dist, uint64_t key, uint64_t block, uint8_t bytes[8],
                                   uint8_t* scale) {
  if (dist == Dist::GpuMode) {
    const uint64_t r = random_bits_keyed(key, block, 0);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(r >> (8 * i));
    const uint64_t s = random_bits_keyed(key, block, 1);
    // e4m3 of 0, 1, 2, 3
    const uint8_t codes[4] = {0x00, 0x38, 0x40, 0x44};
    *scale = codes[s & 3u];
    return;
  }
  float v[kBlockSize];
  float amax = 0.0f;
  NVFP4_DEVICE_ROLLED
  for (int i = 0; i < kBlockSize; ++i) {
    const uint32_t d = static_cast<uint32_t>(i) * 3u;
    v[i] = irwin_hall_normal(random_bits_keyed(key, block, d), random_bits_keyed(key, block, d + 1),
                             random_bits_keyed(key, block, d + 2));
    const float a = v[i] < 0.0f ? -v[i] : v[i];
    amax = a > amax ? a : amax;
  }
  const unsigned sbits = e4m3_encode(amax / 6.0f);
  *scale = static_cast<uint8_t>(sbits);
  const float s = scale_decode(sbits);
  NVFP4_DEVICE_ROLLED
  for (int i = 0; i < 8; ++i) {
    const unsigned lo = s > 0.0f ? e2m1_encode(v[2 * i] / s) : 0u;
    const unsigned hi = s > 0.0f ? e2m1_encode(v[2 * i + 1] / s) : 0u;
    bytes[i] = fp4_pack(lo, hi);
  }
}

NVFP4_HD void generate_block(Dist dist, uint64_t seed, TensorId t, uint64_t block,
                             uint8_t bytes[8], uint8_t* scale) {
  generate_block_keyed(dist, random_key(seed, t), block, bytes, scale);
}

// The verdict's values around each timed call (docs/cli.md, "The verdict"), from seeds it draws
// from its secret through a keyed PRF (src/case/verdict.cpp): mix64 below can be undone, so a
// kernel may recover a seed from what it is given, but no other seed follows. A random finite fp16 for element `index` of a C fill: never Inf, NaN or
// the first call's poison, so a filled C looks like no particular state; its magnitude is in
// [2^10, 2^16), so no element left unwritten passes as a right one within tolerance.
NVFP4_HD uint16_t random_finite_fp16(uint64_t seed, uint64_t index) {
  const uint64_t r = mix64(seed ^ mix64(index));
  const unsigned exponent = 25u + static_cast<unsigned>((r >> 16) % 6u);  // 2^(e - 15)
  return static_cast<uint16_t>((r & 0x83FFu) | (exponent << 10));         // sign, mantissa
}

// The high 64 bits of a * b: maps a uniform 64-bit value onto [0, b) without a division.
NVFP4_HD uint64_t mul_hi64(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// The flat [L, M, N] index of the t-th element gathered from output slot `slot` of a C with
// `elems` elements: every element in order when `per_slot` covers them, else random.
NVFP4_HD int64_t gathered_index(uint64_t seed, int slot, int64_t t, int64_t elems, int64_t per_slot) {
  if (elems <= per_slot) return t;
  const uint64_t key = (static_cast<uint64_t>(slot) << 40) ^ static_cast<uint64_t>(t);
  return static_cast<int64_t>(mul_hi64(mix64(seed ^ mix64(key)), static_cast<uint64_t>(elems)));
}

}  // namespace nvfp4
