// The sm90 main kernel (sm_90a only): one CTA = two warpgroups = 256 threads computing a
// 128 (M) x BN (N) tile of C over a contiguous range of 64-wide K granules.
//
// Data flow per K granule (64 elements = 4 wgmma k16 steps = 4 scale blocks):
//   global --cp.async, STAGES-deep ring--> raw E2M1 bytes + linear E4M3 scales in shared memory
//   A (128 rows): each thread decodes its own wgmma A fragments straight into registers (RS form)
//   B (BN rows):  decoded cooperatively into a second, double-buffered fp16 tile in the
//                 128-byte-swizzled K-major layout that the wgmma descriptor reads (one 128 B
//                 row = the 64 K values of a granule; 16 B chunk c of row n sits at c ^ (n % 8))
//   wgmma m64nBNk16 (A registers, B descriptor), FP32 accumulation; the 4 wgmmas of granule g run
//   while the threads load and decode granule g+1 (wait_group 1).
//
// K order inside a granule: the dot product does not care in which order K is summed, so the
// logical wgmma column j of k-step s is mapped to the physical K index that makes decoding cheap:
//   phys(s, j) = 16*c + 8*u + 4*h + s   for j = 8*u + 2*c + h  (c = j%8/2 block, h = j%2, u = j/8)
// With this map a thread with lane%4 == c owns exactly scale block c of its two rows: one 8-byte
// load and one scale per row per granule, and every fp16x2 register is e2m1x2_raw<s> of one
// 32-bit word. The B tile is written with the same map (sm90_decode.hpp has the bit trick).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/sm90/sm90_decode.hpp"
#include "kernels/sm90/sm90_wgmma.hpp"

namespace nvfp4::sm90 {

struct Params {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;  // linear [L, M, K/16]
  const uint8_t* sfb;  // linear [L, N, K/16]
  __half* c;
  float* ws;           // [split, L, M, N] FP32 partials when split > 1
  int64_t m, n, k, l;
  int nk;              // K / 64
  int cps;             // K granules per split
  int split;
  int tiles_m;
};

constexpr int kThreads = 256;
constexpr int kBM = 128;

template <int BN>
struct Layout {
  static constexpr int kARaw = 0;                  // [128][32] bytes
  static constexpr int kASf = kBM * 32;            // [128][4]
  static constexpr int kBRaw = kASf + kBM * 4;     // [BN][32]
  static constexpr int kBSf = kBRaw + BN * 32;     // [BN][4]
  static constexpr int kStage = kBSf + BN * 4;
  static constexpr int kDec = BN * 64 * 2;         // decoded B, one buffer
  static_assert(kStage % 16 == 0, "stage alignment");
};

template <int BN>
constexpr int stages_for() {
  return BN >= 224 ? 6 : 8;
}

template <int BN>
constexpr size_t smem_bytes() {
  return 1024 + size_t(2) * Layout<BN>::kDec + size_t(stages_for<BN>()) * Layout<BN>::kStage;
}

#if defined(__CUDA_ARCH__)
#define NVFP4_SM90_DEVICE 1
#endif

namespace dev {

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy shared-memory writes made visible to the async proxy (wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accumulator accesses across wgmma issue/wait points.
template <int R>
__device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Pins decoded fragments before wgmma.fence: the f16x2 multiplies are plain asm, which the
// compiler could otherwise sink past the fence (ptxas then serializes the wgmmas, C7513).
__device__ __forceinline__ void fence_frag(uint32_t (&f)[4][4]) {
#pragma unroll
  for (int s = 0; s < 4; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(f[s][i])::"memory");
}

// Shared-memory matrix descriptor for a K-major operand in the 128-byte swizzle layout (layout
// type 1 in bits 62-63): start address, leading byte offset (unused for swizzled K-major, 1),
// stride byte offset = 1024 (between 8-row groups), all in 16-byte units. The tile base is
// 1024-byte aligned; k-step s starts 32*s bytes into the 128-byte rows.
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t saddr) {
  return uint64_t((saddr >> 4) & 0x3FFFu) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

// A fragments of one granule for rows r and r+8 (local), scale block c = lane % 4 (decode_frag).
__device__ __forceinline__ void decode_a(const uint8_t* st, int r, int c, uint32_t (&f)[4][4]) {
  const uint2 w0 = *reinterpret_cast<const uint2*>(st + r * 32 + c * 8);
  const uint2 w1 = *reinterpret_cast<const uint2*>(st + (r + 8) * 32 + c * 8);
  const uint32_t s0 = st[Layout<128>::kASf + r * 4 + c];
  const uint32_t s1 = st[Layout<128>::kASf + (r + 8) * 4 + c];
  decode_frag(w0, w1, s0 | (s1 << 8), f);
}

// Decodes the B granule into the wgmma layout. Work unit (row n, half h): 16 raw bytes = scale
// blocks c = 2h, 2h+1 (words: {c=2h,u=0}, {c=2h,u=1}, {c=2h+1,u=0}, {c=2h+1,u=1}). Logical
// columns j = 8u..8u+7 of k-step s are 16-byte chunk 2s+u of row n, stored at chunk
// (2s+u) ^ (n%8); column j = 8u+2c+e at byte 4c+2e of it, so the unit writes 8 bytes at 8h.
// 8 consecutive rows hit 8 different chunks: no bank conflicts.
template <int BN>
__device__ __forceinline__ void decode_b(const uint8_t* st, uint8_t* dec, int tid) {
  constexpr int kUnits = 2 * BN;
#pragma unroll
  for (int x0 = 0; x0 < kUnits; x0 += kThreads) {
    const int x = x0 + tid;
    if (kUnits % kThreads != 0 && x >= kUnits) break;
    const int n = x >> 1, h = x & 1;
    const uint4 w = *reinterpret_cast<const uint4*>(st + Layout<BN>::kBRaw + n * 32 + h * 16);
    const uint32_t sc = *reinterpret_cast<const uint16_t*>(st + Layout<BN>::kBSf + n * 4 + h * 2);
    const uint32_t m = scale2_boosted(sc);
    const uint32_t m0 = bcast_lo(m), m1 = bcast_hi(m);
    uint8_t* row = dec + n * 128 + h * 8;
    const int sw = n & 7;
#define NVFP4_SM90_PIECE(S)                                                                  \
  *reinterpret_cast<uint2*>(row + (((2 * S + 0) ^ sw) << 4)) =                               \
      make_uint2(hmul2_bits(e2m1x2_raw<S>(w.x), m0), hmul2_bits(e2m1x2_raw<S>(w.z), m1));    \
  *reinterpret_cast<uint2*>(row + (((2 * S + 1) ^ sw) << 4)) =                               \
      make_uint2(hmul2_bits(e2m1x2_raw<S>(w.y), m0), hmul2_bits(e2m1x2_raw<S>(w.w), m1));
    NVFP4_SM90_PIECE(0)
    NVFP4_SM90_PIECE(1)
    NVFP4_SM90_PIECE(2)
    NVFP4_SM90_PIECE(3)
#undef NVFP4_SM90_PIECE
  }
}

}  // namespace dev

// kDiag (timing experiments only, results are garbage): 1 = skip the decodes, 2 = skip wgmma.
template <int BN, int kDiag = 0>
__global__ void __launch_bounds__(kThreads, 1) gemm_kernel(const Params p) {
#if defined(NVFP4_SM90_DEVICE) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = Layout<BN>;
  constexpr int STAGES = stages_for<BN>();
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // The swizzled tiles need 1024-byte alignment; the dynamic window only promises 16.
  uint8_t* const smem = smem_raw + ((1024 - (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) & 1023)) & 1023);
  uint8_t* const dec = smem;                    // 2 x kDec
  uint8_t* const ring = smem + 2 * L::kDec;     // STAGES x kStage
  const uint32_t ring_s = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  const uint32_t dec_s = static_cast<uint32_t>(__cvta_generic_to_shared(dec));

  const int tid = threadIdx.x;
  const int wg = tid >> 7;
  const int warp = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int tm = static_cast<int>(blockIdx.x % p.tiles_m);
  const int tn = static_cast<int>(blockIdx.x / p.tiles_m);
  const int64_t batch = blockIdx.z;
  const int64_t i0 = int64_t(tm) * kBM, j0 = int64_t(tn) * BN;
  const int kc0 = static_cast<int>(blockIdx.y) * p.cps;
  const int nkc = max(0, min(p.nk - kc0, p.cps));
  const int64_t kbytes = p.k / 2, kblocks = p.k / 16;

  // Per-thread copy sources (rows clamped into range: rows past M/N compute garbage that is
  // never stored).
  const int64_t a_row = min(i0 + (tid >> 1), p.m - 1);
  const uint8_t* a_src = p.a + (batch * p.m + a_row) * kbytes + (tid & 1) * 16 + int64_t(kc0) * 32;
  const uint32_t a_dst = L::kARaw + (tid >> 1) * 32 + (tid & 1) * 16;
  const int64_t as_row = min(i0 + (tid & 127), p.m - 1);
  const uint8_t* as_src = p.sfa + (batch * p.m + as_row) * kblocks + int64_t(kc0) * 4;
  const uint32_t as_dst = L::kASf + (tid & 127) * 4;
  constexpr int kBCopies = (2 * BN + kThreads - 1) / kThreads;
  constexpr int kBSCopies = (BN + kThreads - 1) / kThreads;
  const uint8_t* b_src[kBCopies];
  uint32_t b_dst[kBCopies];
#pragma unroll
  for (int q = 0; q < kBCopies; ++q) {
    const int x = tid + q * kThreads;
    const int64_t row = min(j0 + (x >> 1), p.n - 1);
    b_src[q] = p.b + (batch * p.n + row) * kbytes + (x & 1) * 16 + int64_t(kc0) * 32;
    b_dst[q] = L::kBRaw + (x >> 1) * 32 + (x & 1) * 16;
  }
  const uint8_t* bs_src[kBSCopies];
  uint32_t bs_dst[kBSCopies];
#pragma unroll
  for (int q = 0; q < kBSCopies; ++q) {
    const int x = tid + q * kThreads;
    const int64_t row = min(j0 + x, p.n - 1);
    bs_src[q] = p.sfb + (batch * p.n + row) * kblocks + int64_t(kc0) * 4;
    bs_dst[q] = L::kBSf + x * 4;
  }

  auto load = [&](int it) {  // granule kc0 + it into ring slot it % STAGES
    const uint32_t base = ring_s + (it % STAGES) * L::kStage;
    dev::cp_async16(base + a_dst, a_src + int64_t(it) * 32);
    if (tid < kBM) dev::cp_async4(base + as_dst, as_src + int64_t(it) * 4);
#pragma unroll
    for (int q = 0; q < kBCopies; ++q)
      if ((2 * BN) % kThreads == 0 || tid + q * kThreads < 2 * BN)
        dev::cp_async16(base + b_dst[q], b_src[q] + int64_t(it) * 32);
#pragma unroll
    for (int q = 0; q < kBSCopies; ++q)
      if (BN % kThreads == 0 || tid + q * kThreads < BN)
        dev::cp_async4(base + bs_dst[q], bs_src[q] + int64_t(it) * 4);
  };

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
  uint32_t fa0[4][4] = {}, fa1[4][4] = {};

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nkc) load(s);
    dev::cp_async_commit();
  }

  const int r_local = 64 * wg + 16 * warp + (lane >> 2);
  const int c_blk = lane & 3;

  auto step = [&](int it, uint32_t(&fa)[4][4], int buf) {
    dev::cp_async_wait<STAGES - 2>();
    __syncthreads();  // granule `it` landed for all threads; slot (it-1) free; dec[buf] free
    if (it + STAGES - 1 < nkc) load(it + STAGES - 1);
    dev::cp_async_commit();
    const uint8_t* st = ring + (it % STAGES) * L::kStage;
    if (kDiag != 1) {
      dev::decode_b<BN>(st, dec + buf * L::kDec, tid);
      dev::decode_a(st, r_local, c_blk, fa);
    }
    dev::fence_frag(fa);
    dev::fence_proxy_async();
    __syncthreads();  // decoded B visible to both warpgroups
    // Descriptors are computed (and pinned) before wgmma.fence: a non-wgmma instruction that
    // defines a wgmma input inside the fence..commit window makes ptxas serialize (C7513).
    const uint32_t db = dec_s + buf * L::kDec;
    uint64_t desc[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      desc[s] = dev::make_desc_sw128(db + s * 32);
      asm volatile("" : "+l"(desc[s])::"memory");
    }
    dev::fence_acc(acc);
    dev::wgmma_fence();
    if (kDiag != 2) {
#pragma unroll
      for (int s = 0; s < 4; ++s) Wgmma<BN>::mma(acc, fa[s], desc[s]);
    }
    dev::wgmma_commit();
    dev::fence_acc(acc);
    dev::wgmma_wait<1>();  // granule it-1 finished: its dec buffer and fragments are reusable
  };

  // Unrolled by two so each fragment buffer is a fixed register set. Every path back to a step
  // that rewrites fa0 passes the step that retires fa0's wgmmas; a loop whose back edge could
  // skip the fa1 step would make ptxas serialize all wgmmas (C7513).
  if (nkc > 0) {
    for (int it = 0;; it += 2) {
      step(it, fa0, 0);
      if (it + 1 >= nkc) break;
      step(it + 1, fa1, 1);
      if (it + 2 >= nkc) break;
    }
  }
  dev::wgmma_wait<0>();
  dev::fence_acc(acc);
  dev::cp_async_wait<0>();

  // Epilogue: accumulator register 4j + 2hh + e holds (row r_local + 8hh, col 8j + 2(lane%4) + e).
  const bool pairs = (p.n % 2) == 0;  // then every (row, even col) pair is 4-/8-byte aligned
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int64_t col = j0 + 8 * j + 2 * c_blk;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int64_t row = i0 + r_local + 8 * hh;
      if (row >= p.m || col >= p.n) continue;
      const float v0 = acc[4 * j + 2 * hh] * kAccUnscale;
      const float v1 = acc[4 * j + 2 * hh + 1] * kAccUnscale;
      const int64_t off = (batch * p.m + row) * p.n + col;
      const bool two = col + 1 < p.n;
      if (p.split == 1) {
        __half* cp = p.c + off;
        if (pairs) {
          *reinterpret_cast<__half2*>(cp) = __floats2half2_rn(v0, v1);
        } else {
          cp[0] = __float2half_rn(v0);
          if (two) cp[1] = __float2half_rn(v1);
        }
      } else {
        float* wp = p.ws + int64_t(blockIdx.y) * p.l * p.m * p.n + off;
        if (pairs) {
          *reinterpret_cast<float2*>(wp) = make_float2(v0, v1);
        } else {
          wp[0] = v0;
          if (two) wp[1] = v1;
        }
      }
    }
  }
#else
  (void)p;
#endif
}

// Explicit instantiation entry points (one translation unit per BN, compiled in parallel).
template <int BN>
void launch_bn(const Params& p, dim3 grid, cudaStream_t stream);
// Timing experiments (bench only): BN = 256 with kDiag 1 or 2.
void launch_diag(const Params& p, dim3 grid, cudaStream_t stream, int diag);

}  // namespace nvfp4::sm90
