#include "kernels/host/host_sgemm.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "src/core/parallel.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4::host {

namespace {

typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
#define NVFP4_INLINE inline __attribute__((always_inline))

constexpr int64_t kRowsPerTask = 256;  // rows of A per task (C chunk [256][32] floats)
constexpr int64_t kColsPerTask = 32;   // rows of B per task: 32 x kKBlock floats, 128 KB (L2)

// byte -> its two E2M1 values (even K index in the low nibble), and E4M3 scale byte -> float.
struct Tables {
  std::array<float, 512> pair;
  std::array<float, 256> scale;
  Tables() {
    for (unsigned b = 0; b < 256; ++b) {
      pair[2 * b] = e2m1_decode(b & 0xFu);
      pair[2 * b + 1] = e2m1_decode(b >> 4);
      scale[b] = scale_decode(b);
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

// Elements [k0, k0 + kc) of one row (packed codes q, linear scales sf) as floats into out.
void decode(const uint8_t* q, const uint8_t* sf, int64_t k0, int64_t kc, float* out) {
  const Tables& t = tables();
  for (int64_t blk = 0; blk < kc / kBlockSize; ++blk) {
    const int64_t k = k0 + blk * kBlockSize;
    const float s = t.scale[sf[k / kBlockSize]];
    const uint8_t* qb = q + k / 2;
    float* o = out + blk * kBlockSize;
    for (int e = 0; e < kBlockSize / 2; ++e) {
      o[2 * e] = t.pair[2 * qb[e]] * s;  // exact: <= 6 significant bits each
      o[2 * e + 1] = t.pair[2 * qb[e] + 1] * s;
    }
  }
}

// The 16 lanes summed by a fixed tree, the same on every instruction set.
NVFP4_INLINE float lane_sum(const float (&v)[16]) {
  float h[8], q[4];
  for (int i = 0; i < 8; ++i) h[i] = v[i] + v[i + 8];
  for (int i = 0; i < 4; ++i) q[i] = h[i] + h[i + 4];
  return (q[0] + q[2]) + (q[1] + q[3]);
}

// An unaligned load of a vector of floats (a type that may alias float).
template <class V>
NVFP4_INLINE void load(V& v, const float* p) {
  typedef V unaligned __attribute__((aligned(4), may_alias));
  v = *reinterpret_cast<const unaligned*>(p);
}

// MR x NR dot products of length kc (a multiple of 16): rows a[r], b[c]. Lane l of the 16 sums
// the elements k = l mod 16; they are held as 16 / W vectors of V (W floats each), so that
// every instruction set keeps them in registers and all sum alike.
template <class V, int MR, int NR>
NVFP4_INLINE void tile(const float* const* a, const float* const* b, int64_t kc,
                       float (&out)[MR][NR]) {
  constexpr int W = sizeof(V) / sizeof(float), P = 16 / W;
  V acc[MR][NR][P];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c)
      for (int p = 0; p < P; ++p) acc[r][c][p] = V{};
  for (int64_t k = 0; k < kc; k += 16) {
    V av[MR][P];  // B's vectors loaded one at a time: fewer live registers
    for (int r = 0; r < MR; ++r)
      for (int p = 0; p < P; ++p) load(av[r][p], a[r] + k + p * W);
    for (int c = 0; c < NR; ++c)
      for (int p = 0; p < P; ++p) {
        V bv;
        load(bv, b[c] + k + p * W);
        for (int r = 0; r < MR; ++r) acc[r][c][p] += av[r][p] * bv;
      }
  }
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) {
      float lanes[16];
      for (int p = 0; p < P; ++p)
        for (int e = 0; e < W; ++e) lanes[p * W + e] = acc[r][c][p][e];
      out[r][c] = lane_sum(lanes);
    }
}

// C chunk [rows][cols] (row stride cols) += A block [rows][kc] (row stride lda) * B block
// [cols][kc]^T. Edge tiles repeat the last row or column and keep only the valid results.
template <class V, int MR, int NR>
NVFP4_INLINE void block(const float* a, int64_t lda, int64_t rows, const float* b, int64_t cols,
                        int64_t kc, float* c) {
  for (int64_t i0 = 0; i0 < rows; i0 += MR)
    for (int64_t j0 = 0; j0 < cols; j0 += NR) {
      const float* ap[MR];
      const float* bp[NR];
      for (int r = 0; r < MR; ++r) ap[r] = a + std::min<int64_t>(i0 + r, rows - 1) * lda;
      for (int q = 0; q < NR; ++q) bp[q] = b + std::min<int64_t>(j0 + q, cols - 1) * kc;
      float out[MR][NR];
      tile<V, MR, NR>(ap, bp, kc, out);
      for (int r = 0; r < MR && i0 + r < rows; ++r)
        for (int q = 0; q < NR && j0 + q < cols; ++q) c[(i0 + r) * cols + j0 + q] += out[r][q];
    }
}

// One instantiation per instruction set, with a register tile that fits its register file
// (AVX-512: 32 zmm, one per 16 lanes; AVX2: 16 ymm, two per 16 lanes; SSE2: 16 xmm, four).
using BlockFn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*);
__attribute__((target("avx512f"))) void block_avx512(const float* a, int64_t lda, int64_t rows,
                                                     const float* b, int64_t cols, int64_t kc,
                                                     float* c) {
  block<v16f, 4, 4>(a, lda, rows, b, cols, kc, c);
}
__attribute__((target("avx2,fma"))) void block_avx2(const float* a, int64_t lda, int64_t rows,
                                                    const float* b, int64_t cols, int64_t kc,
                                                    float* c) {
  block<v8f, 2, 2>(a, lda, rows, b, cols, kc, c);
}
void block_generic(const float* a, int64_t lda, int64_t rows, const float* b, int64_t cols,
                   int64_t kc, float* c) {
  block<v4f, 1, 2>(a, lda, rows, b, cols, kc, c);
}

BlockFn block_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return block_avx512;
    case Isa::Avx2: return block_avx2;
    case Isa::Generic: break;
  }
  return block_generic;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    case Isa::Generic: break;
  }
  return "generic";
}

std::vector<Isa> isas_here() {
  std::vector<Isa> out;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) out.push_back(Isa::Avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(Isa::Avx2);
#endif
  out.push_back(Isa::Generic);
  return out;
}

bool parse_isa(const std::string& name, Isa& out) {
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Generic})
    if (name == isa_name(isa)) {
      out = isa;
      return true;
    }
  return false;
}

void gemm(const Shape& s, const Operands& ops, Isa isa) {
  const BlockFn blk = block_for(isa);
  const int64_t kbs = s.k / kBlockSize;
  std::vector<float> a(static_cast<size_t>(s.m * s.k));
  const int64_t row_tasks = (s.m + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t col_tasks = (s.n + kColsPerTask - 1) / kColsPerTask;
  for (int64_t batch = 0; batch < s.l; ++batch) {
    const Operands x = batch_slice(ops, s, batch);
    const uint8_t *qa = x.a, *qb = x.b, *sfa = x.sfa, *sfb = x.sfb;
    uint16_t* c = x.c;
    parallel_for(s.m, [&](int64_t i) {
      decode(qa + i * (s.k / 2), sfa + i * kbs, 0, s.k, a.data() + i * s.k);
    });
    // A task: rows [i0, i0 + 256) x columns [j0, j0 + 32) of C over all of K, B's 32 rows
    // decoded one K block at a time (A was decoded once above).
    parallel_for(row_tasks * col_tasks, [&](int64_t task) {
      const int64_t i0 = task / col_tasks * kRowsPerTask, j0 = task % col_tasks * kColsPerTask;
      const int64_t rows = std::min(kRowsPerTask, s.m - i0), cols = std::min(kColsPerTask, s.n - j0);
      std::vector<float> bblk(static_cast<size_t>(cols * std::min(kKBlock, s.k)));
      std::vector<float> acc(static_cast<size_t>(rows * cols), 0.0f);
      for (int64_t k0 = 0; k0 < s.k; k0 += kKBlock) {
        const int64_t kc = std::min(kKBlock, s.k - k0);
        for (int64_t q = 0; q < cols; ++q)
          decode(qb + (j0 + q) * (s.k / 2), sfb + (j0 + q) * kbs, k0, kc, bblk.data() + q * kc);
        blk(a.data() + i0 * s.k + k0, s.k, rows, bblk.data(), cols, kc, acc.data());
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t q = 0; q < cols; ++q)  // exact widening, one rounding
          c[(i0 + r) * s.n + j0 + q] = fp16_bits_from_double(acc[r * cols + q]);
    });
  }
}

}  // namespace nvfp4::host
