// Hopper (sm_90a) fp16 GEMM mainloop: C[l] = A[l] * B[l]^T, FP32 accumulation, fp16 output.
//
//   A [L, M, K] fp16 row-major (K contiguous), B [L, N, K] fp16 (K contiguous),
//   C [L, M, N] fp16 row-major. Any M, N >= 1, K a multiple of 64, L >= 1.
//
// Design (standard Hopper practice, written for this project):
//   * persistent CTAs (grid <= #SMs) walking work units (output tile x K split) in a grouped
//     order (group_m tile-rows at a time) so concurrently running CTAs share A/B panels in L2;
//   * tile BM x BN: 128 x (16 to 256 in steps of 16), or 256 x 128. Narrow N steps let the tile
//     count match the SM count (N = 576 is four 144-wide tiles, not 2.25 of 256 or 4.5 of 128);
//   * 384 threads = 3 warpgroups. Warpgroup 0 is the producer (setmaxnreg 40): one thread
//     issues cp.async.bulk.tensor.3d (128-byte swizzle) loads of a [BM x 64] A slab and a
//     [BN x 64] B slab per stage into a STAGES-deep shared-memory ring, full/empty mbarriers;
//   * warpgroups 1, 2 are consumers (setmaxnreg 232), each owning BM/2 rows of the tile:
//     wgmma.mma_async m64nBNk16 f32.f16.f16, both operands from shared memory (SS form),
//     K-major descriptors with 128B swizzle; one wgmma group kept in flight (wait_group 1)
//     before the previous stage is released to the producer;
//   * epilogue (N % 8 == 0 and C 16-byte aligned): FP32 -> fp16 packed into 64x64 boxes in shared
//     memory with stmatrix (128B-swizzled, conflict-free), fence.proxy.async, then one thread per
//     consumer warpgroup writes each box with a TMA store (cp.async.bulk.tensor, rows/cols past
//     M/N clipped by the tensor map); two 8 KB boxes per warpgroup (32 KB in all), reuse gated by
//     cp.async.bulk.wait_group.read 1, so the warpgroups go back to the next tile's MMAs without
//     waiting for global writes; the BN % 64 columns past the last whole box go straight from
//     the fragments. Other N: masked half2/half stores from the fragments.
//     The producer already streams the next unit's stages meanwhile;
//   * optional cluster of 2 CTAs along M (cfg.cluster_m = 2): each CTA loads its own A slab
//     and half of the shared B slab, multicast into both CTAs' rings; a stage is refilled
//     only after the consumers of both CTAs released it (remote mbarrier arrives, default
//     .release.cta semantics as in CUTLASS's ClusterBarrier::arrive: an explicit
//     .release.cluster arrive compiled to MEMBAR.ALL.GPU per release and made cluster 2
//     1.5-1.8x slower). Now at parity with cluster 1 on an H200, not faster: not chosen;
//   * optional split-K (cfg.splits > 1): every split writes its FP32 partial to the workspace,
//     the last split to arrive (per-tile counter) sums all partials in split order 0..S-1
//     (deterministic: the result does not depend on arrival order) and stores the tile.
//
// Depends only on CUDA headers and the generated wgmma wrappers (sm90_wgmma.hpp, WgmmaSS<BN>).
// cuTensorMapEncodeTiled is fetched through the runtime's driver entry point (no link against
// libcuda). Build with -gencode=arch=compute_90a,code=sm_90a.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/sm90/sm90_wgmma.hpp"

namespace nvfp4::sm90 {

// ------------------------------------------------------------------------------------------
// Public configuration / API
// ------------------------------------------------------------------------------------------
struct F16GemmConfig {
  int bm = 128;      // tile rows: 128, or 256 with bn = 128
  int bn = 256;      // tile columns: 16 to 256 in steps of 16 (bm = 128), 128 (bm = 256)
  int splits = 1;    // K splits (>= 1), reduced inside the kernel; clamped to K/64
  int group_m = 8;   // tile-rows per scheduler group (L2 reuse)
  int max_ctas = 0;  // persistent grid size cap; 0 = number of SMs
  int cluster_m = 1; // 1, or 2: CTA pairs along M share (TMA-multicast) the B tile
};

inline size_t f16_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int64_t l, const F16GemmConfig& cfg);
inline void f16_gemm_launch(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k,
                            int64_t l, const F16GemmConfig& cfg, void* workspace, cudaStream_t stream);
inline F16GemmConfig choose_f16_config(int64_t m, int64_t n, int64_t k, int64_t l, int sm_count);

namespace f16_detail {

// ------------------------------------------------------------------------------------------
// Device helpers (PTX)
// ------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Blocks until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// 3-D tiled bulk tensor load global -> shared, completion counted on `bar` (bytes).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void prefetch_tmap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Register "touch" so the compiler keeps accumulator reads/writes on the right side of the
// asynchronous wgmma fences/waits.
template <int R>
__device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Shared-memory matrix descriptor, K-major operand, 128-byte swizzle: rows of 128 bytes
// (64 fp16 of K), 8-row core groups 1024 bytes apart (SBO), LBO unused for swizzled K-major
// (set to 1), base offset 0 (every tile starts 1024-byte aligned). Advancing K by 16 fp16
// = +32 bytes = +2 in the start-address field.
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t saddr) {
  return static_cast<uint64_t>((saddr >> 4) & 0x3FFFu) | (static_cast<uint64_t>(1) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}


__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// Arrive on the mbarrier at the same shared-memory offset in CTA `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}

// 3-D tiled bulk tensor load multicast to the CTAs in `mask` (same smem offset, each CTA's
// mbarrier at offset `bar` receives the complete_tx for the bytes written into that CTA).
__device__ __forceinline__ void tma_load_3d_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                               int c2, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
      : "memory");
}

// 3-D tiled bulk tensor store shared -> global (bulk-group completion); OOB clipped by the map.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Four 8x8 b16 matrices; lane t gives the row address of row t%8 of matrix t/8; register j holds
// this lane's (row lane/4, cols 2*(lane%4)+{0,1}) pair of matrix j (the mma accumulator layout).
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// stmatrix with .trans: lane t's register j holds the pair (row t/4, cols 2*(t%4)+{0,1}) of matrix j
// as for stmatrix_x4, and memory row q of matrix j (address from lane 8j+q) receives column q:
// a transposed store (the fused path's C^T accumulators written as rows of C).
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                                  uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}
// One contiguous global -> shared bulk copy (16-byte multiple), completion counted on `bar`.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// Per-thread asynchronous copies (L2 only for 16 bytes, L1-allocating for 4), and an mbarrier
// arrive that fires once all of this thread's earlier cp.async have landed (.noinc: the barrier's
// expected count includes this arrive).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ uint2 ld_shared_v2(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_shared_u8(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u8 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
// Register "touch" for wgmma register operands (RS form): keeps the decode that defines them on
// the near side of wgmma.fence (else ptxas serialises the wgmmas, C7513).
template <int R>
__device__ __forceinline__ void fence_regs(uint32_t (&f)[R][4]) {
#pragma unroll
  for (int s = 0; s < R; ++s)
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(f[s][i])::"memory");
}
__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// ------------------------------------------------------------------------------------------
// Kernel
// ------------------------------------------------------------------------------------------
struct Params {
  __half* C;
  float* ws;       // split-K partials [tiles][splits][BM*BN] (fragment order)
  int* counters;   // split-K arrival counters [tiles], zeroed by the launch, left zero on exit
  int M, N, L;
  int nk;          // K / 64
  int tiles_m, tiles_n;
  int tiles_mc;    // ceil(tiles_m / CM): tile-rows of clusters
  int splits;
  int group_m;     // in cluster tile-rows
  int units;       // L * tiles_mc * tiles_n * splits (cluster work units)
  int tma_store;   // 1: epilogue stages C through smem and writes it with TMA stores (N % 8 == 0)
};

template <int BM, int BN, int CM>
struct Shape {
  static constexpr int kBK = 64;                     // fp16 of K per stage (128 bytes / row)
  static constexpr int kABytes = BM * 128;
  static constexpr int kBBytes = BN * 128;
  static constexpr int kBPart = kBBytes / CM;        // B rows loaded (and multicast) by one CTA
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kMT = BM / 128;               // m64 blocks per consumer warpgroup
  static constexpr int kAcc = BN / 2;                // fp32 accumulators per m64 block / thread
  // epilogue staging: per consumer warpgroup two 64x64 fp16 boxes (8 KB each, 128B-swizzled)
  static constexpr int kEpiBox = 64 * 64 * 2;
  static constexpr int kEpiBytes = 2 * 2 * kEpiBox;
  // as many stages as fit in the 227 KB an H100/H200 CTA may use (6 for 32 KB stages, 4 for
  // 48 KB), at most 8
  static constexpr int kStages = std::min(8, (232448 - 1024 - kEpiBytes - 256) / kStageBytes);
  static_assert(BM == 128 || BM == 256, "tile rows: 128 or 256");
  static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256, "tile columns: 16 to 256 in steps of 16");
  static_assert(kStages >= 3, "the ring needs at least 3 stages");
  static constexpr size_t kSmem = 1024 + size_t(kStages) * kStageBytes + kEpiBytes + 2 * kStages * 8 + 16;
};

struct Unit {
  int tile, split, l, mt, m0, n0, kb0, kb1;
};

// Cluster work unit u -> (tile, split) for CTA `rank` of the cluster; cluster tiles ordered in
// groups of group_m cluster tile-rows within a batch (CTAs running together share panels).
__device__ __forceinline__ Unit decode_unit(const Params& p, int u, int BM, int BN, int CM, int rank) {
  Unit w;
  const int tc = u / p.splits;
  w.split = u - tc * p.splits;
  const int per_batch = p.tiles_mc * p.tiles_n;
  w.l = tc / per_batch;
  const int idx = tc - w.l * per_batch;
  const int span = p.group_m * p.tiles_n;
  const int g = idx / span;
  const int first_m = g * p.group_m;
  const int gsz = min(p.tiles_mc - first_m, p.group_m);
  const int r = idx - g * span;
  const int nt = r / gsz;
  w.mt = (first_m + r % gsz) * CM + rank;
  w.m0 = w.mt * BM;
  w.n0 = nt * BN;
  w.tile = (w.l * p.tiles_m + w.mt) * p.tiles_n + nt;  // valid only when w.mt < tiles_m
  // balanced K ranges: split s gets k-blocks [s*nk/S, (s+1)*nk/S)
  w.kb0 = static_cast<int>((static_cast<long long>(w.split) * p.nk) / p.splits);
  w.kb1 = static_cast<int>((static_cast<long long>(w.split + 1) * p.nk) / p.splits);
  return w;
}

// Stores two adjacent fp16 outputs (row, col), (row, col+1) with edge masking.
__device__ __forceinline__ void store2(__half* C, const Params& p, int l, int row, int col, float a, float b,
                                       bool vec_ok) {
  if (row >= p.M || col >= p.N) return;
  __half* dst = C + (static_cast<size_t>(l) * p.M + row) * static_cast<size_t>(p.N) + col;
  if (vec_ok && col + 1 < p.N) {
    *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(a, b);
  } else {
    dst[0] = __float2half_rn(a);
    if (col + 1 < p.N) dst[1] = __float2half_rn(b);
  }
}

template <int BM, int BN, int CM>
__global__ void __launch_bounds__(384, 1)
    f16_gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                    const __grid_constant__ CUtensorMap tmC, const Params p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  using S = Shape<BM, BN, CM>;
  constexpr int ST = S::kStages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // 128B-swizzled tiles need 1024-byte alignment
  const uint32_t sA = base;
  const uint32_t sB = base + ST * S::kABytes;
  const uint32_t sE = sB + ST * S::kBBytes;      // epilogue boxes, 1024-aligned
  const uint32_t full = sE + S::kEpiBytes;        // ST mbarriers
  const uint32_t empty = full + ST * 8;           // ST mbarriers
  int* flag = reinterpret_cast<int*>(smem_raw + (empty + ST * 8 - raw));
  // the dynamic smem base offset is identical in every CTA of the kernel, so all the
  // addresses above are at the same offsets in the peer CTA (needed for multicast / mapa)
  const uint32_t rank = (CM > 1) ? cluster_ctarank() : 0u;
  const int cid = blockIdx.x / CM, nclusters = gridDim.x / CM;

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      mbar_init(full + s * 8, 1);        // own producer's arrive.expect_tx
      mbar_init(empty + s * 8, 8 * CM);  // lane 0 of each consumer warp of every CTA in the cluster
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (CM > 1) cluster_sync(); else __syncthreads();

  if (wg == 0) {
    // ---------------- producer warpgroup ----------------
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tmap(&tmA);
      prefetch_tmap(&tmB);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cid; u < p.units; u += nclusters) {
        const Unit w = decode_unit(p, u, BM, BN, CM, rank);
        for (int kb = w.kb0; kb < w.kb1; ++kb) {
          mbar_wait(empty + stage * 8, phase ^ 1u);  // (in a cluster: released by both CTAs)
          const uint32_t fb = full + stage * 8;
          mbar_arrive_expect_tx(fb, S::kStageBytes);
          tma_load_3d(sA + stage * S::kABytes, &tmA, fb, kb * 64, w.m0, w.l);
          if constexpr (CM == 1) {
            tma_load_3d(sB + stage * S::kBBytes, &tmB, fb, kb * 64, w.n0, w.l);
          } else {
            tma_load_3d_mc(sB + stage * S::kBBytes + rank * S::kBPart, &tmB, fb, kb * 64,
                           w.n0 + static_cast<int>(rank) * (BN / CM), w.l, static_cast<uint16_t>((1u << CM) - 1u));
          }
          if (++stage == ST) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // ---------------- consumer warpgroups ----------------
    setmaxnreg_inc<232>();
    const int cw = wg - 1;                 // 0 / 1: which BM/2 rows of the tile
    const int ct = threadIdx.x - 128;      // 0..255 across both consumers
    const int tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = tid & 31;
    const uint64_t descA0 = make_desc_sw128(sA + cw * (BM / 2) * 128);
    const uint64_t descB0 = make_desc_sw128(sB);
    float acc[S::kMT][S::kAcc];
    int stage = 0;
    uint32_t phase = 0;
    const bool vec_ok = (p.N % 2) == 0;
    uint32_t ebox = 0;  // epilogue boxes written by this warpgroup (selects the staging buffer)

    auto release = [&](int st) {
      if (lane == 0) {
        if constexpr (CM == 1) {
          mbar_arrive(empty + st * 8);
        } else {
#pragma unroll
          for (int r = 0; r < CM; ++r) mbar_arrive_cluster(empty + st * 8, r);
        }
      }
    };

    for (int u = cid; u < p.units; u += nclusters) {
      const Unit w = decode_unit(p, u, BM, BN, CM, rank);
      int prev = -1;
      for (int kb = w.kb0; kb < w.kb1; ++kb) {
        mbar_wait(full + stage * 8, phase);
        wgmma_fence();
#pragma unroll
        for (int k16 = 0; k16 < 4; ++k16) {
          const uint64_t db = descB0 + static_cast<uint64_t>((stage * S::kBBytes + k16 * 32) >> 4);
#pragma unroll
          for (int mt = 0; mt < S::kMT; ++mt) {
            const uint64_t da = descA0 + static_cast<uint64_t>((stage * S::kABytes + mt * 64 * 128 + k16 * 32) >> 4);
            WgmmaSS<BN>::mma(acc[mt], da, db, (kb != w.kb0 || k16 != 0) ? 1 : 0);
          }
        }
        wgmma_commit();
        wgmma_wait<1>();  // the group of the previous k-block is done: its stage may be refilled
        if (prev >= 0) release(prev);
        prev = stage;
        if (++stage == ST) {
          stage = 0;
          phase ^= 1u;
        }
      }
      wgmma_wait<0>();
#pragma unroll
      for (int mt = 0; mt < S::kMT; ++mt) fence_regs(acc[mt]);
      if (prev >= 0) release(prev);
      if (w.m0 >= p.M) continue;  // cluster peer of a ragged last tile-row: nothing to store

      // ---- split-K: publish partial, last arriver reduces in fixed split order ----
      if (p.splits > 1) {
        float* ws_tile = p.ws + static_cast<size_t>(w.tile) * p.splits * (BM * BN);
        float4* mine = reinterpret_cast<float4*>(ws_tile + static_cast<size_t>(w.split) * (BM * BN));
#pragma unroll
        for (int mt = 0; mt < S::kMT; ++mt)
#pragma unroll
          for (int q = 0; q < S::kAcc / 4; ++q)
            __stcg(mine + (mt * (S::kAcc / 4) + q) * 256 + ct,
                   make_float4(acc[mt][4 * q], acc[mt][4 * q + 1], acc[mt][4 * q + 2], acc[mt][4 * q + 3]));
        __threadfence();
        named_bar_sync(1, 256);
        if (ct == 0) {
          const int old = atomicAdd(p.counters + w.tile, 1);
          const int last = (old == p.splits - 1) ? 1 : 0;
          if (last) p.counters[w.tile] = 0;  // every split has arrived: reset for the next launch
          *flag = last;
        }
        named_bar_sync(1, 256);
        if (*flag == 0) continue;
        __threadfence();
        // Last split: acc = sum of all partials (its own re-read too) in split order 0..S-1,
        // so the result does not depend on arrival order. Loads of one split are independent.
        const float4* src = reinterpret_cast<const float4*>(ws_tile) + ct;
#pragma unroll
        for (int mt = 0; mt < S::kMT; ++mt)
#pragma unroll
          for (int q = 0; q < S::kAcc / 4; ++q) {
            const float4 v = __ldcg(src + (mt * (S::kAcc / 4) + q) * 256);
            acc[mt][4 * q] = v.x;
            acc[mt][4 * q + 1] = v.y;
            acc[mt][4 * q + 2] = v.z;
            acc[mt][4 * q + 3] = v.w;
          }
        for (int s = 1; s < p.splits; ++s) {
          const float4* srcs = src + static_cast<size_t>(s) * (BM * BN / 4);
#pragma unroll
          for (int mt = 0; mt < S::kMT; ++mt)
#pragma unroll
            for (int q = 0; q < S::kAcc / 4; ++q) {
              const float4 v = __ldcg(srcs + (mt * (S::kAcc / 4) + q) * 256);
              acc[mt][4 * q] += v.x;
              acc[mt][4 * q + 1] += v.y;
              acc[mt][4 * q + 2] += v.z;
              acc[mt][4 * q + 3] += v.w;
            }
        }
      }

      // ---- epilogue (TMA store): fragment -> fp16 64x64 smem boxes (stmatrix, 128B swizzle) ->
      // cp.async.bulk.tensor store; two boxes per warpgroup in flight, OOB rows/cols clipped ----
      if (p.tma_store) {
        const int g8 = lane >> 3, i8 = lane & 7;
        const uint32_t ebase = sE + cw * (2 * S::kEpiBox);
#pragma unroll
        for (int mt = 0; mt < S::kMT; ++mt) {
#pragma unroll
          for (int bx = 0; bx < BN / 64; ++bx) {
            const uint32_t buf = ebase + (ebox & 1) * S::kEpiBox;
            if (tid == 0) bulk_wait_read<1>();  // the store that last read `buf` has finished reading
            named_bar_sync(2 + cw, 128);
            const int row = warp * 16 + i8 + 8 * (g8 & 1);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int c = bx * 8 + 2 * j;   // 8-column chunk of the fragment
              const int chunk = 2 * j + (g8 >> 1);
              stmatrix_x4(buf + row * 128 + ((chunk ^ i8) << 4),
                          pack_half2(acc[mt][4 * c], acc[mt][4 * c + 1]),
                          pack_half2(acc[mt][4 * c + 2], acc[mt][4 * c + 3]),
                          pack_half2(acc[mt][4 * c + 4], acc[mt][4 * c + 5]),
                          pack_half2(acc[mt][4 * c + 6], acc[mt][4 * c + 7]));
            }
            fence_proxy_async_smem();
            named_bar_sync(2 + cw, 128);
            if (tid == 0) {
              tma_store_3d(&tmC, buf, w.n0 + bx * 64, w.m0 + cw * (BM / 2) + mt * 64, w.l);
              bulk_commit();
            }
            ++ebox;
          }
        }
        if constexpr (BN % 64 != 0) {
          // the last BN % 64 columns (N tiles in steps of 16): straight from the fragments,
          // masked at the edges (a 64-column box would write into the next tile)
#pragma unroll
          for (int mt = 0; mt < S::kMT; ++mt) {
            const int r0 = w.m0 + cw * (BM / 2) + mt * 64 + warp * 16 + (lane >> 2);
            const int c0 = w.n0 + 2 * (lane & 3);
#pragma unroll
            for (int c = (BN / 64) * 8; c < BN / 8; ++c) {
              store2(p.C, p, w.l, r0, c0 + 8 * c, acc[mt][4 * c], acc[mt][4 * c + 1], vec_ok);
              store2(p.C, p, w.l, r0 + 8, c0 + 8 * c, acc[mt][4 * c + 2], acc[mt][4 * c + 3], vec_ok);
            }
          }
        }
        continue;
      }

      // ---- epilogue: fragment (m64nBN f32 layout) -> fp16 global ----
      // acc[mt][4c + {0,1}] -> row r0,   cols n0 + 8c + 2*(lane%4) + {0,1}
      // acc[mt][4c + {2,3}] -> row r0+8, same cols;  r0 = m0 + cw*BM/2 + mt*64 + warp*16 + lane/4
      const bool full_tile = vec_ok && (w.m0 + BM <= p.M) && (w.n0 + BN <= p.N);
#pragma unroll
      for (int mt = 0; mt < S::kMT; ++mt) {
        const int r0 = w.m0 + cw * (BM / 2) + mt * 64 + warp * 16 + (lane >> 2);
        const int c0 = w.n0 + 2 * (lane & 3);
        if (full_tile) {
          __half* row0 = p.C + (static_cast<size_t>(w.l) * p.M + r0) * static_cast<size_t>(p.N) + c0;
          __half* row1 = row0 + static_cast<size_t>(8) * p.N;
#pragma unroll
          for (int c = 0; c < BN / 8; ++c) {
            *reinterpret_cast<__half2*>(row0 + 8 * c) = __floats2half2_rn(acc[mt][4 * c], acc[mt][4 * c + 1]);
            *reinterpret_cast<__half2*>(row1 + 8 * c) = __floats2half2_rn(acc[mt][4 * c + 2], acc[mt][4 * c + 3]);
          }
        } else {
#pragma unroll
          for (int c = 0; c < BN / 8; ++c) {
            store2(p.C, p, w.l, r0, c0 + 8 * c, acc[mt][4 * c], acc[mt][4 * c + 1], vec_ok);
            store2(p.C, p, w.l, r0 + 8, c0 + 8 * c, acc[mt][4 * c + 2], acc[mt][4 * c + 3], vec_ok);
          }
        }
      }
    }
    if (tid == 0) bulk_wait<0>();  // staged C stores complete before the CTA's smem goes away
  }
  // In a cluster, no CTA may exit while its peer can still arrive on its barriers.
  if constexpr (CM > 1) cluster_sync();
#endif
}

// ------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("f16_gemm: ") + what + ": " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
  }
}

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiledFn encode_fn() {
  static EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q),
          "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
#else
    check(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q),
          "cudaGetDriverEntryPoint(cuTensorMapEncodeTiled)");
#endif
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("f16_gemm: cuTensorMapEncodeTiled entry point not found");
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

// [L, rows, K] fp16, K contiguous; box [1, box_rows, 64], 128-byte swizzle, OOB -> zero.
inline CUtensorMap make_tmap(const __half* ptr, int64_t rows, int64_t k, int64_t l, int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(l)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k) * 2, static_cast<cuuint64_t>(rows * k) * 2};
  const cuuint32_t box[3] = {64u, static_cast<cuuint32_t>(box_rows), 1u};
  const cuuint32_t estr[3] = {1u, 1u, 1u};
  const CUresult r = encode_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<__half*>(ptr), dims, strides,
                                 box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("f16_gemm: cuTensorMapEncodeTiled failed, CUresult " + std::to_string(int(r)));
  return map;
}

// C [L, M, N] fp16 row-major; box [1, box_rows, 64] (64 columns = 128 bytes), 128-byte swizzle.
// Needs N % 8 == 0 (16-byte row pitch) and a 16-byte aligned base.
inline CUtensorMap make_tmap_c(__half* ptr, int64_t m, int64_t n, int64_t l, int box_rows = 64) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(m), static_cast<cuuint64_t>(l)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(n) * 2, static_cast<cuuint64_t>(m * n) * 2};
  const cuuint32_t box[3] = {64u, static_cast<cuuint32_t>(box_rows), 1u};
  const cuuint32_t estr[3] = {1u, 1u, 1u};
  const CUresult r = encode_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, ptr, dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("f16_gemm: cuTensorMapEncodeTiled (C) failed, CUresult " + std::to_string(int(r)));
  return map;
}

inline int device_sm_count() {
  int dev = 0, sms = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SM count)");
  return sms;
}

inline bool tile_supported(int bm, int bn) {
  return (bm == 128 && bn % 16 == 0 && bn >= 16 && bn <= 256) || (bm == 256 && bn == 128);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

inline int effective_splits(int64_t k, const F16GemmConfig& cfg) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cfg.splits, k / 64)));
}

template <int BM, int BN, int CM>
void launch_impl(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, int64_t l,
                 const F16GemmConfig& cfg, void* workspace, cudaStream_t stream) {
  using S = Shape<BM, BN, CM>;
  const int64_t tiles_m = ceil_div(m, BM), tiles_n = ceil_div(n, BN);
  const int64_t tiles_mc = ceil_div(tiles_m, CM);
  const int64_t tiles = l * tiles_m * tiles_n;
  const int splits = effective_splits(k, cfg);
  const int64_t units = l * tiles_mc * tiles_n * splits;
  if (units > INT32_MAX / 2 || tiles * splits > INT32_MAX / 2 || m > INT32_MAX / 2 || n > INT32_MAX / 2 ||
      k > INT32_MAX / 2 || l > 65535)
    throw std::runtime_error("f16_gemm: problem too large for 32-bit tile indexing");

  Params p{};
  p.C = C;
  p.M = static_cast<int>(m);
  p.N = static_cast<int>(n);
  p.L = static_cast<int>(l);
  p.nk = static_cast<int>(k / 64);
  p.tiles_m = static_cast<int>(tiles_m);
  p.tiles_n = static_cast<int>(tiles_n);
  p.tiles_mc = static_cast<int>(tiles_mc);
  p.splits = splits;
  p.group_m = std::max(1, cfg.group_m / CM);
  p.units = static_cast<int>(units);
  if (splits > 1) {
    if (workspace == nullptr) throw std::runtime_error("f16_gemm: split-K needs a workspace");
    const size_t part = align_up(static_cast<size_t>(tiles * splits) * BM * BN * sizeof(float), 256);
    p.ws = static_cast<float*>(workspace);
    p.counters = reinterpret_cast<int*>(static_cast<char*>(workspace) + part);
    check(cudaMemsetAsync(p.counters, 0, static_cast<size_t>(tiles) * sizeof(int), stream),
          "cudaMemsetAsync(split-K counters)");
  }

  const CUtensorMap ta = make_tmap(A, m, k, l, BM);
  const CUtensorMap tb = make_tmap(B, n, k, l, BN / CM);
  CUtensorMap tc;
  std::memset(&tc, 0, sizeof(tc));
  p.tma_store = (n % 8 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0) ? 1 : 0;
  if (p.tma_store) tc = make_tmap_c(C, m, n, l);

  auto kern = f16_gemm_kernel<BM, BN, CM>;
  static int max_clusters = -1;  // per instantiation (per process; single device assumed)
  if (max_clusters < 0) {
    check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(S::kSmem)),
          "cudaFuncSetAttribute(max dynamic smem)");
    int mc = device_sm_count() / CM;
    if (CM > 1) {
      cudaLaunchConfig_t oc = {};
      oc.gridDim = dim3(static_cast<unsigned>(CM * mc), 1, 1);
      oc.blockDim = dim3(384, 1, 1);
      oc.dynamicSmemBytes = S::kSmem;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = CM;
      at[0].val.clusterDim.y = 1;
      at[0].val.clusterDim.z = 1;
      oc.attrs = at;
      oc.numAttrs = 1;
      check(cudaOccupancyMaxActiveClusters(&mc, kern, &oc), "cudaOccupancyMaxActiveClusters");
      if (mc < 1) throw std::runtime_error("f16_gemm: cluster configuration cannot be scheduled");
    }
    max_clusters = mc;
  }
  int64_t nclusters = std::min<int64_t>(max_clusters, device_sm_count() / CM);
  if (cfg.max_ctas > 0) nclusters = std::min<int64_t>(nclusters, std::max(1, cfg.max_ctas / CM));
  nclusters = std::max<int64_t>(1, std::min<int64_t>(nclusters, units));

  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(static_cast<unsigned>(nclusters * CM), 1, 1);
  lc.blockDim = dim3(384, 1, 1);
  lc.dynamicSmemBytes = S::kSmem;
  lc.stream = stream;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = CM;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  lc.attrs = at;
  lc.numAttrs = CM > 1 ? 1 : 0;  // plain launch for CM == 1
  check(cudaLaunchKernelEx(&lc, kern, ta, tb, tc, p), "cudaLaunchKernelEx(f16_gemm_kernel)");
  check(cudaGetLastError(), "f16_gemm_kernel launch");
}

// Tile 128 x cfg.bn: one instantiation per N step of 16.
template <int BN>
void launch_bm128(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, int64_t l,
                  const F16GemmConfig& cfg, void* workspace, cudaStream_t stream) {
  if (cfg.bn == BN) return launch_impl<128, BN, 1>(A, B, C, m, n, k, l, cfg, workspace, stream);
  if constexpr (BN < 256) launch_bm128<BN + 16>(A, B, C, m, n, k, l, cfg, workspace, stream);
}

}  // namespace f16_detail

// ------------------------------------------------------------------------------------------
// Public API implementation (inline: header-only)
// ------------------------------------------------------------------------------------------
inline size_t f16_gemm_workspace_bytes(int64_t m, int64_t n, int64_t k, int64_t l, const F16GemmConfig& cfg) {
  using namespace f16_detail;
  const int splits = effective_splits(k, cfg);
  if (splits <= 1 || !tile_supported(cfg.bm, cfg.bn)) return 0;
  const int64_t tiles = l * ceil_div(m, cfg.bm) * ceil_div(n, cfg.bn);
  return align_up(static_cast<size_t>(tiles * splits) * cfg.bm * cfg.bn * sizeof(float), 256) +
         align_up(static_cast<size_t>(tiles) * sizeof(int), 256);
}

inline void f16_gemm_launch(const __half* A, const __half* B, __half* C, int64_t m, int64_t n, int64_t k, int64_t l,
                            const F16GemmConfig& cfg, void* workspace, cudaStream_t stream) {
  using namespace f16_detail;
  if (m < 1 || n < 1 || l < 1 || k < 64 || k % 64 != 0)
    throw std::runtime_error("f16_gemm: need M, N, L >= 1 and K a positive multiple of 64");
  if ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B)) % 16 != 0)
    throw std::runtime_error("f16_gemm: A and B must be 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(C) % 4 != 0) throw std::runtime_error("f16_gemm: C must be 4-byte aligned");
  const int cm = cfg.cluster_m;
  if (cm != 1 && cm != 2) throw std::runtime_error("f16_gemm: cluster_m must be 1 or 2");
  if (!tile_supported(cfg.bm, cfg.bn))
    throw std::runtime_error("f16_gemm: unsupported tile " + std::to_string(cfg.bm) + "x" + std::to_string(cfg.bn) +
                             " (expected 128 x 16..256 in steps of 16, or 256 x 128)");
  if (cm == 2) {
    if (cfg.bm == 128 && cfg.bn == 256) return launch_impl<128, 256, 2>(A, B, C, m, n, k, l, cfg, workspace, stream);
    if (cfg.bm == 256 && cfg.bn == 128) return launch_impl<256, 128, 2>(A, B, C, m, n, k, l, cfg, workspace, stream);
    if (cfg.bm == 128 && cfg.bn == 128) return launch_impl<128, 128, 2>(A, B, C, m, n, k, l, cfg, workspace, stream);
    throw std::runtime_error("f16_gemm: cluster_m 2 needs tile 128x256, 256x128 or 128x128");
  }
  if (cfg.bm == 256) return launch_impl<256, 128, 1>(A, B, C, m, n, k, l, cfg, workspace, stream);
  launch_bm128<16>(A, B, C, m, n, k, l, cfg, workspace, stream);
}

// Cost model of the mainloop, in microseconds on an H200 (132 SMs): persistent waves =
// ceil(units / SMs), each of (k-blocks per unit) x (0.101 + 0.246 w) us, w = BN / 128 (2 for
// 256x128, +0.012 us per k-block), plus 1.38 w us of fill and epilogue per wave; split-K adds
// per wave 4.38 us + 0.613 s w us (FP32 partials written and read back by the last split).
// Fitted, with the decode pass of the two-phase path (sm90_two_phase.cu), to every tile x split
// 1-8 of 37 shapes (bench/results/h200/2026-12-01-sm90-nstep/fit, sm90_bench --sweep-2phase):
// relative least squares over the configurations within 1.5x of each shape's fastest. Its pick
// is within 1 % of the measured best on average and 9 % at worst (tests/unit/sm90_host_test.cpp).
// The wider the tile, the more of each k-block's fixed cost it amortises; the narrower, the more
// evenly the tiles fill the SMs (N = 576: four 144-wide tiles make 128 units at M = 4096).
inline double f16_mainloop_us(int64_t m, int64_t n, int64_t k, int64_t l, const F16GemmConfig& cfg,
                              int sm_count) {
  using namespace f16_detail;
  if (!tile_supported(cfg.bm, cfg.bn)) return 1e300;
  const int64_t nk = std::max<int64_t>(1, k / 64);
  const int s = std::max(1, cfg.splits);
  const int64_t tiles = l * ceil_div(m, cfg.bm) * ceil_div(n, cfg.bn);
  const double w = cfg.bm == 256 ? 2.0 : cfg.bn / 128.0;
  const double waves = static_cast<double>(ceil_div(tiles * s, std::max(1, sm_count)));
  const double kb = static_cast<double>(ceil_div(nk, s));
  double t = waves * kb * (0.1006 + 0.2456 * w + (cfg.bm == 256 ? 0.0116 : 0.0)) + waves * w * 1.3809;
  if (s > 1) t += waves * (4.3835 + 0.6133 * s * w);
  return t;
}

// The configurations the chooser considers (the grid the model was fitted to), in order of
// preference on near-ties: tiles 128x256, 256x128, 128x128, then 128 x the other N steps; splits
// 1-4, 6, 8 keeping >= 512 of K per split; 16 tile-rows per scheduler group when there are that
// many (measured 1-2.5 % faster than 8 at 4096^3 / 8192^3). sm90_bench --sweep-2phase times them.
inline std::vector<F16GemmConfig> f16_candidates(int64_t m, int64_t k) {
  std::vector<std::pair<int, int>> tiles{{128, 256}, {256, 128}, {128, 128}};
  for (int bn = 16; bn <= 240; bn += 16)
    if (bn != 128) tiles.emplace_back(128, bn);
  const int64_t nk = std::max<int64_t>(1, k / 64);
  std::vector<F16GemmConfig> out;
  for (const auto& [bm, bn] : tiles)
    for (int s : {1, 2, 3, 4, 6, 8}) {
      if (s > 1 && nk / s < 8) break;
      F16GemmConfig c;
      c.bm = bm;
      c.bn = bn;
      c.splits = s;
      c.group_m = f16_detail::ceil_div(m, bm) >= 16 ? 16 : 8;
      c.cluster_m = 1;  // cluster 2 runs at parity with cluster 1 (no gain measured): not chosen
      out.push_back(c);
    }
  return out;
}

inline F16GemmConfig choose_f16_config(int64_t m, int64_t n, int64_t k, int64_t l, int sm_count) {
  F16GemmConfig best;
  double best_cost = 1e300;
  for (const F16GemmConfig& c : f16_candidates(m, k)) {
    const double cost = f16_mainloop_us(m, n, k, l, c, sm_count);
    if (cost < best_cost * 0.99) {  // prefer fewer splits / earlier candidates on near-ties
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

}  // namespace nvfp4::sm90
