// The NVFP4 format, defined once for host code, device code, tests and references:
// E2M1 and E4M3 codecs, nibble packing, fp16 rounding and the two scale-factor layouts.
// Everything here is header-only and usable from g++ and nvcc alike.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define NVFP4_HD __host__ __device__ __forceinline__
#else
#define NVFP4_HD inline
#endif

namespace nvfp4 {

// One E4M3 scale covers this many consecutive K elements of a row.
constexpr int kBlockSize = 16;
// The blocked scale layout tiles rows by 128 and scale columns by 4 (a 512-byte atom).
constexpr int kAtomRows = 128;
constexpr int kAtomCols = 4;
constexpr int kAtomBytes = kAtomRows * kAtomCols;

// ---------------------------------------------------------------------------------------------
// E2M1 (FP4): bit 3 sign, bits 0..2 index the magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}.

// Twice the magnitude of each code, as an integer: lets references sum products exactly.
NVFP4_HD int e2m1_twice_magnitude(unsigned code) {
  // 0, 1, 2, 3, 4, 6, 8, 12 packed as 4-bit fields, so it needs no table in memory on the device.
  return static_cast<int>((0xC8643210u >> (4u * (code & 7u))) & 0xFu);
}

// 2 * value as a signed integer in {0, +-1, +-2, +-3, +-4, +-6, +-8, +-12}.
NVFP4_HD int e2m1_twice(unsigned code) {
  const int m = e2m1_twice_magnitude(code);
  return (code & 8u) ? -m : m;
}

NVFP4_HD float e2m1_decode(unsigned code) {
  const float m = 0.5f * static_cast<float>(e2m1_twice_magnitude(code));
  return (code & 8u) ? -m : m;
}

// Round to nearest, ties to even code (even mantissa), saturating at +-6. The sign is kept,
// so -0.1 encodes as 8 (-0). E2M1 has no NaN: NaN encodes as +0.
NVFP4_HD unsigned e2m1_encode(float x) {
  if (x != x) return 0u;
  const unsigned sign = (x < 0.0f || (x == 0.0f && std::signbit(x))) ? 8u : 0u;
  const float a = std::fabs(x);
  unsigned m;
  if (a <= 0.25f) m = 0;       // tie 0.25 -> 0 (even)
  else if (a < 0.75f) m = 1;   // tie 0.75 -> 1.0
  else if (a <= 1.25f) m = 2;  // tie 1.25 -> 1.0
  else if (a < 1.75f) m = 3;   // tie 1.75 -> 2.0
  else if (a <= 2.5f) m = 4;   // tie 2.5 -> 2.0
  else if (a < 3.5f) m = 5;    // tie 3.5 -> 4.0
  else if (a <= 5.0f) m = 6;   // tie 5 -> 4.0
  else m = 7;                  // saturate
  return sign | m;
}

// ---------------------------------------------------------------------------------------------
// E4M3 (FP8, "fn" variant): bias 7, no Inf, 0x7F/0xFF NaN, max 448, min subnormal 2^-9.

NVFP4_HD float e4m3_decode(unsigned bits) {
  const unsigned e = (bits >> 3) & 0xFu;
  const unsigned m = bits & 7u;
  float v;
  if (e == 0xFu && m == 7u) {
    v = NAN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<float>(m), -9);
  } else {
    v = std::ldexp(static_cast<float>(8u + m), static_cast<int>(e) - 10);
  }
  return (bits & 0x80u) ? -v : v;
}

// Round to nearest even, saturating to +-448; NaN -> 0x7F (or 0xFF if negative).
NVFP4_HD unsigned e4m3_encode(float x) {
  if (x != x) return std::signbit(x) ? 0xFFu : 0x7Fu;
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  float a = std::fabs(x);
  if (a >= 448.0f) return sign | 0x7Eu;
  // Quantum: 2^-9 in the subnormal range, else 2^(floor(log2 a) - 3). Dividing by a power of
  // two is exact, so rint (ties to even) gives the correctly rounded result on host and device.
  int e2 = 0;
  (void)std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  int exp_unbiased = e2 - 1;
  if (exp_unbiased < -6) exp_unbiased = -6;
  const int q = exp_unbiased - 3;
  const float n = std::rint(std::ldexp(a, -q));  // integer in [0, 16]
  const float r = std::ldexp(n, q);
  if (r >= 448.0f) return sign | 0x7Eu;
  if (r == 0.0f) return sign;
  int re = 0;
  (void)std::frexp(r, &re);
  const int eu = re - 1;
  if (eu < -6) {  // subnormal
    return sign | static_cast<unsigned>(std::ldexp(r, 9));
  }
  const unsigned mant = static_cast<unsigned>(std::ldexp(r, 3 - eu)) - 8u;
  return sign | (static_cast<unsigned>(eu + 7) << 3) | mant;
}

// Block scales are used unsigned (UE4M3), as cuBLASLt and the tensor cores do: the sign bit
// is ignored. The generators never set it.
NVFP4_HD float scale_decode(unsigned bits) { return e4m3_decode(bits & 0x7Fu); }

// ---------------------------------------------------------------------------------------------
// Packing: two E2M1 codes per byte, the EVEN K index in the LOW nibble.

NVFP4_HD unsigned fp4_at(const uint8_t* row, int64_t k) {
  const unsigned byte = row[k >> 1];
  return (k & 1) ? (byte >> 4) : (byte & 0xFu);
}

NVFP4_HD uint8_t fp4_pack(unsigned even, unsigned odd) {
  return static_cast<uint8_t>((even & 0xFu) | ((odd & 0xFu) << 4));
}

// ---------------------------------------------------------------------------------------------
// fp16 bits, rounded once from double or float (round to nearest even, overflow to Inf).
// Device kernels use __float2half_rn; the references use this so that a double result is
// rounded exactly once.

NVFP4_HD uint16_t fp16_bits_from_double(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  if (x != x) return 0x7E00u;
  double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7C00u;  // 65520 = max + half ulp rounds up to Inf
  if (a < std::ldexp(1.0, -25)) return sign;  // below half the smallest subnormal (ties -> 0)
  int e2 = 0;
  (void)std::frexp(a, &e2);
  int eu = e2 - 1;
  if (eu < -14) eu = -14;
  const int q = eu - 10;
  double n = std::rint(std::ldexp(a, -q));  // exact scaling, one rounding
  if (n >= 2048.0) {  // mantissa overflowed into the next binade
    n *= 0.5;
    ++eu;
    if (eu > 15) return sign | 0x7C00u;
  }
  const unsigned un = static_cast<unsigned>(n);
  if (un < 1024u) return sign | static_cast<uint16_t>(un);  // subnormal
  return sign | static_cast<uint16_t>(((eu + 15) << 10) | (un - 1024u));
}

NVFP4_HD double fp16_bits_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  double v;
  if (e == 0x1F) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp(static_cast<double>(m), -24);
  else v = std::ldexp(static_cast<double>(1024 + m), e - 25);
  return (h & 0x8000u) ? -v : v;
}

// Byte written over outputs before each run (memset-able): every fp16 element then reads 0x7F7F,
// a NaN no arithmetic produces (they give 0x7E00), so an element still holding it was never
// written.
constexpr uint8_t kPoisonByte = 0x7Fu;
constexpr uint16_t kPoisonFp16 = 0x7F7Fu;

// ---------------------------------------------------------------------------------------------
// Scale layouts. For a tensor of `rows` rows (M or N), K columns and L batches:
//   linear  [rows, K/16, L], strides (K/16, 1, rows*K/16)  (GPU MODE sfa/sfb)
//   blocked 128x4 atoms:  offset(r,c) = ((r/128)*(Kp/4) + c/4)*512 + (r%32)*16
//                                       + ((r%128)/32)*4 + c%4,  plus batch*Rp*Kp
//   with Rp = roundup(rows,128), Kp = roundup(K/16,4); padding entries are zero.

struct ScaleLayout {
  int64_t rows = 0;     // M or N
  int64_t kblocks = 0;  // K / 16
  int64_t batches = 1;  // L

  NVFP4_HD static ScaleLayout make(int64_t rows, int64_t k, int64_t batches) {
    ScaleLayout s;
    s.rows = rows;
    s.kblocks = k / kBlockSize;
    s.batches = batches;
    return s;
  }
  NVFP4_HD int64_t rows_padded() const { return (rows + kAtomRows - 1) / kAtomRows * kAtomRows; }
  NVFP4_HD int64_t kblocks_padded() const {
    return (kblocks + kAtomCols - 1) / kAtomCols * kAtomCols;
  }
  NVFP4_HD int64_t linear_bytes() const { return rows * kblocks * batches; }
  NVFP4_HD int64_t blocked_bytes_per_batch() const { return rows_padded() * kblocks_padded(); }
  NVFP4_HD int64_t blocked_bytes() const { return blocked_bytes_per_batch() * batches; }

  NVFP4_HD int64_t linear_offset(int64_t r, int64_t c, int64_t batch) const {
    return (batch * rows + r) * kblocks + c;
  }
  // Valid for padded coordinates too (r < rows_padded(), c < kblocks_padded()).
  NVFP4_HD int64_t blocked_offset(int64_t r, int64_t c, int64_t batch) const {
    return batch * blocked_bytes_per_batch() +
           ((r / kAtomRows) * (kblocks_padded() / kAtomCols) + c / kAtomCols) * kAtomBytes +
           (r % 32) * 16 + ((r % kAtomRows) / 32) * 4 + (c % kAtomCols);
  }
};

}  // namespace nvfp4
