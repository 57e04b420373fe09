// Exact E2M1 -> fp16 decoding used by the sm90 kernel, written so the bit trick compiles for the
// host too (tests/gpu/sm90_test.cu checks it exhaustively against e2m1_decode on both sides).
//
// One 32-bit word holds 8 packed codes n0..n7 (n_e in bits 4e..4e+3, the lower K index in the
// lower nibble). e2m1x2_raw<I> builds an fp16x2 from codes (n_I, n_{I+4}): the 3 magnitude bits
// go to fp16 bits 11..9 (low 2 exponent bits + top mantissa bit) and the sign to bit 15. Such an
// fp16 is exactly value * 2^-14 for every code, subnormal codes 0 and 0.5 included (docs/facts.md
// section 4, "shift and mask, then one multiply").
//
// The one multiply applies the block scale as it is (E4M3 converts to fp16 exactly) and leaves the
// bias: every decoded product raw * scale = value * scale * 2^-14 has at most 6 significant bits
// and is a multiple of 2^-24 (0.5 x the smallest E4M3 subnormal 2^-9 x 2^-14), the fp16 subnormal
// step, so it is exact in fp16, subnormal or not (tested exhaustively, host and device); the
// largest is 6 x 448 x 2^-14. Both operands carry 2^-14, so the FP32 accumulator is multiplied by
// 2^28 at the end (products down to 2^-48 are normal in FP32: nothing flushes). The bias was once
// folded into the multiplier as scale * 2^7 (2^7 on each side, 2^14 at the end), which took one
// more HMUL2 per scale pair (docs/kernels.md, the consumer chain).
#pragma once

#include <cstdint>

#include "src/format/nvfp4.hpp"

namespace nvfp4::sm90 {

// Factor between the true product sum and the FP32 accumulator: 2^-14 from each operand.
constexpr float kAccUnscale = 268435456.0f;  // 2^28

template <int I>
NVFP4_HD uint32_t e2m1x2_raw(uint32_t w) {
  static_assert(I >= 0 && I < 4, "pair index");
  const uint32_t mag = (I == 3 ? (w >> 3) : (w << (9 - 4 * I))) & 0x0E000E00u;
  const uint32_t sgn = (w << (12 - 4 * I)) & 0x80008000u;
  return mag | sgn;
}

// (a & kMask) | (b & ~kMask): one LOP3 on the device (lookup table 0xE4 = c ? a : b), written as
// such because from and/and/or ptxas makes two.
template <uint32_t kMask>
NVFP4_HD uint32_t bit_select(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(d) : "r"(a), "r"(b), "n"(kMask));
  return d;
#else
  return (a & kMask) | (b & ~kMask);
#endif
}

// Bytes of x picked by a PRMT selector (4 nibbles, result byte 0 first: 0-3 a byte of x, 4 zero):
// one PRMT on the device.
template <uint32_t kSel>
NVFP4_HD uint32_t byte_pick(uint32_t x) {
#if defined(__CUDA_ARCH__)
  uint32_t d;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(d) : "r"(x), "n"(kSel));
  return d;
#else
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t k = (kSel >> (4 * i)) & 0xFu;
    if (k < 4) d |= ((x >> (8 * k)) & 0xFFu) << (8 * i);
  }
  return d;
#endif
}

// w & 0x88888888 (the eight codes' sign bits), opaque to the compiler on the device: left to it,
// s << 4 below became (w << 4) & 0x88888880, a second mask instead of a shared one.
NVFP4_HD uint32_t sign_bits(uint32_t w) {
#if defined(__CUDA_ARCH__)
  uint32_t d;
  asm("and.b32 %0, %1, 0x88888888;" : "=r"(d) : "r"(w));
  return d;
#else
  return w & 0x88888888u;
#endif
}

// All four pairs of one word at once: o[I] == e2m1x2_raw<I>(w), bit for bit, in 10 integer
// instructions instead of 4 x ~4 (the decode is most of the streaming loop's and the fused
// consumers' instructions). Per byte, ve holds its even nibble's magnitude in bits 1-3 and its sign
// in bit 7, vo the same of its odd nibble, every other bit zero: one select each, the magnitude
// from one shift of w, the sign from the nibbles' sign bits s (shifted by 4 for the even nibble;
// where s << 4 brings the odd sign into the next byte's bit 3 the select takes the magnitude).
// Bytes 1 and 3 are then already where fp16 wants them (magnitude to bits 9-11 and 25-27, sign to
// 15 and 31) and bytes 0 and 2 one byte up: one byte pick each. (With garbage in the unused bits,
// as before, each output took a mask and two of them a shift too: 11 instructions.)
NVFP4_HD void e2m1x2_quad(uint32_t w, uint32_t (&o)[4]) {
  constexpr uint32_t kMag = 0x0E0E0E0Eu;
  const uint32_t s = sign_bits(w);
  const uint32_t ve = bit_select<kMag>(w << 1, s << 4);
  const uint32_t vo = bit_select<kMag>(w >> 3, s);
  o[0] = byte_pick<0x2404u>(ve);
  o[1] = byte_pick<0x2404u>(vo);
  o[2] = byte_pick<0x3414u>(ve);
  o[3] = byte_pick<0x3414u>(vo);
}

// Runtime-index twin for host tests.
NVFP4_HD uint32_t e2m1x2_raw_rt(uint32_t w, int i) {
  switch (i) {
    case 0: return e2m1x2_raw<0>(w);
    case 1: return e2m1x2_raw<1>(w);
    case 2: return e2m1x2_raw<2>(w);
    default: return e2m1x2_raw<3>(w);
  }
}

#if defined(__CUDACC__)
// fp16x2 multiply, round to nearest (exact for the operands used here).
__device__ __forceinline__ uint32_t hmul2_bits(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Two E4M3 scale bytes (low byte -> low half) -> fp16x2 of the scales, sign bit ignored (UE4M3:
// the absolute value, which ptxas folds into the operand of the multiply that uses it) and NaN
// (0x7F) kept NaN, as scale_decode does.
__device__ __forceinline__ uint32_t scale2_fp16(uint32_t two_bytes) {
  uint32_t h;
  const unsigned short in = static_cast<unsigned short>(two_bytes);
  asm("{\n.reg .b32 t;\ncvt.rn.f16x2.e4m3x2 t, %1;\nabs.f16x2 %0, t;\n}" : "=r"(h) : "h"(in));
  return h;
}

// One half of an fp16x2 in both (as PTX moves of halves, which ptxas folds into the operand
// selector of the HMUL2 that uses it: no PRMT).
__device__ __forceinline__ uint32_t bcast_lo(uint32_t h2) {
  uint32_t d;
  asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %1;\nmov.b32 %0, {l, l};\n}" : "=r"(d) : "r"(h2));
  return d;
}
__device__ __forceinline__ uint32_t bcast_hi(uint32_t h2) {
  uint32_t d;
  asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %1;\nmov.b32 %0, {h, h};\n}" : "=r"(d) : "r"(h2));
  return d;
}

// wgmma register fragments (m64k16, f16x2) of one 64-K granule for rows r and r+8 of a 16-row
// slice, scale block c = lane % 4: w0 / w1 are the 8 raw bytes (16 codes) of block c of rows r /
// r+8, sc01 their two scale bytes in its low half (row r in the low byte; the high half is
// ignored). f[s] are the four registers of k-step s: {(r, j=2c..2c+1), (r+8, ..), (r, j=2c+8..),
// (r+8, j=2c+8..)}, i.e. e2m1x2_raw<s> of the low word (j < 8) and of the high word (j >= 8),
// which is the K order of decode_row (the A prepass) too.
// The same with the multipliers given: m0 / m1 = the scale of rows r / r+8 in both halves.
__device__ __forceinline__ void decode_frag_m(uint2 w0, uint2 w1, uint32_t m0, uint32_t m1,
                                              uint32_t (&f)[4][4]) {
  uint32_t r[4][4];  // [word: w0.x, w1.x, w0.y, w1.y][pair]
  e2m1x2_quad(w0.x, r[0]);
  e2m1x2_quad(w1.x, r[1]);
  e2m1x2_quad(w0.y, r[2]);
  e2m1x2_quad(w1.y, r[3]);
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    f[s][0] = hmul2_bits(r[0][s], m0);
    f[s][1] = hmul2_bits(r[1][s], m1);
    f[s][2] = hmul2_bits(r[2][s], m0);
    f[s][3] = hmul2_bits(r[3][s], m1);
  }
}

__device__ __forceinline__ void decode_frag(uint2 w0, uint2 w1, uint32_t sc01,
                                            uint32_t (&f)[4][4]) {
  const uint32_t m = scale2_fp16(sc01);
  decode_frag_m(w0, w1, bcast_lo(m), bcast_hi(m), f);
}

// One row's 64-K granule: raw bytes lo (K 0-31) / hi (K 32-63), four scale bytes, decoded into
// the eight 16-byte chunks of its K-major fp16 row; chunk q = 2s + u holds logical columns
// 8u..8u+7 of k-step s (word c of the chunk = block c), decode_frag's K order. store(q, chunk)
// places it (the caller swizzles).
template <class Store>
__device__ __forceinline__ void decode_row(uint4 lo, uint4 hi, uint32_t sc4, Store&& store) {
  const uint32_t m01 = scale2_fp16(sc4 & 0xFFFFu), m23 = scale2_fp16(sc4 >> 16);
  const uint32_t m0 = bcast_lo(m01), m1 = bcast_hi(m01), m2 = bcast_lo(m23), m3 = bcast_hi(m23);
  // word (c, u) sits at byte 8c + 4u: lo = {(0,0), (0,1), (1,0), (1,1)}, hi = {(2,0) ... (3,1)}
#define NVFP4_SM90_ROW_PIECE(S)                                                              \
  store(2 * S + 0, make_uint4(hmul2_bits(e2m1x2_raw<S>(lo.x), m0),                           \
                              hmul2_bits(e2m1x2_raw<S>(lo.z), m1),                           \
                              hmul2_bits(e2m1x2_raw<S>(hi.x), m2),                           \
                              hmul2_bits(e2m1x2_raw<S>(hi.z), m3)));                         \
  store(2 * S + 1, make_uint4(hmul2_bits(e2m1x2_raw<S>(lo.y), m0),                           \
                              hmul2_bits(e2m1x2_raw<S>(lo.w), m1),                           \
                              hmul2_bits(e2m1x2_raw<S>(hi.y), m2),                           \
                              hmul2_bits(e2m1x2_raw<S>(hi.w), m3)));
  NVFP4_SM90_ROW_PIECE(0)
  NVFP4_SM90_ROW_PIECE(1)
  NVFP4_SM90_ROW_PIECE(2)
  NVFP4_SM90_ROW_PIECE(3)
#undef NVFP4_SM90_ROW_PIECE
}
#endif

}  // namespace nvfp4::sm90
