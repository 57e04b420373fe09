// The two-phase path's fp16 GEMM mainloop kernel (sm_90a): C[l] = A[l] * B[l]^T, FP32
// accumulation, fp16 output. Its launcher is mainloop.cu.
//
//   A [L, M, K] fp16 row-major (K contiguous), B [L, N, K] fp16 (K contiguous),
//   C [L, M, N] fp16 row-major. Any M, N >= 1, K a multiple of 64, L >= 1.
//
// Design (standard Hopper practice, written for this project):
//   * persistent CTAs (grid <= #SMs) walking work units (output tile x K split) in the grouped
//     order of walk.hpp (group tile-rows at a time) so CTAs running together share A/B
//     panels in L2;
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
//   * optional split-K (splits > 1): reduce_split_k (schedule.cuh), the last split of a tile to
//     arrive sums all partials in split order.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sm90/descriptors.hpp"
#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/schedule.cuh"
#include "kernels/sm90/wgmma.hpp"

namespace nvfp4::sm90::mainloop {

struct Params {
  __half* C;
  float* ws;       // split-K partials [tiles][splits][BM*BN] (fragment order)
  int* counters;   // split-K arrival counters [tiles], zeroed by the launch, left zero on exit
  int M, N, L;
  int nk;          // K / 64
  int tiles_m, tiles_n;
  int splits;
  int group_m;     // tile-rows per scheduler band
  int units;       // L * tiles_m * tiles_n * splits
  int tma_store;   // 1: epilogue stages C through smem and writes it with TMA stores (N % 8 == 0)
};

template <int BM, int BN>
struct Tile {
  static constexpr int kBK = 64;                     // fp16 of K per stage (128 bytes / row)
  static constexpr int kABytes = BM * 128;
  static constexpr int kBBytes = BN * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kMT = BM / 128;               // m64 blocks per consumer warpgroup
  static constexpr int kAcc = BN / 2;                // fp32 accumulators per m64 block / thread
  // epilogue staging: per consumer warpgroup two 64x64 fp16 boxes (8 KB each, 128B-swizzled)
  static constexpr int kEpiBox = 64 * 64 * 2;
  static constexpr int kEpiBytes = 2 * 2 * kEpiBox;
  // as many stages as fit in the 227 KB an H100/H200 CTA may use (6 for 32 KB stages, 4 for
  // 48 KB), at most 8
  static constexpr int kFit = (232448 - 1024 - kEpiBytes - 256) / kStageBytes;
  static constexpr int kStages = kFit < 8 ? kFit : 8;
  static_assert(BM == 128 || BM == 256, "tile rows: 128 or 256");
  static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256, "tile columns: 16 to 256 in steps of 16");
  static_assert(kStages >= 3, "the ring needs at least 3 stages");
  // + 16: split-K's flag (reduce_split_k, SmemFlag) after the mbarriers
  static constexpr size_t kSmem = 1024 + size_t(kStages) * kStageBytes + kEpiBytes + 2 * kStages * 8 + 16;
};

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

template <int BM, int BN>
__global__ void __launch_bounds__(384, 1)
    mainloop_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                    const __grid_constant__ CUtensorMap tmC, const Params p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  using S = Tile<BM, BN>;
  constexpr int ST = S::kStages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // 128B-swizzled tiles need 1024-byte alignment
  const uint32_t sA = base;
  const uint32_t sB = base + ST * S::kABytes;
  const uint32_t sE = sB + ST * S::kBBytes;      // epilogue boxes, 1024-aligned
  const uint32_t full = sE + S::kEpiBytes;        // ST mbarriers
  const uint32_t empty = full + ST * 8;           // ST mbarriers
  int* flag = reinterpret_cast<int*>(smem_raw + (empty + ST * 8 - raw));  // split-K's broadcast

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      ptx::mbar_init(full + s * 8, 1);  // the producer's arrive.expect_tx
      ptx::mbar_init(empty + s * 8, 8); // lane 0 of each consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    // ---------------- producer warpgroup ----------------
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      ptx::prefetch_tmap(&tmA);
      ptx::prefetch_tmap(&tmB);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
        const WorkUnit w = work_unit(u, p.tiles_m, p.tiles_n, p.splits, p.group_m, p.nk);
        for (int kb = w.kb0; kb < w.kb1; ++kb) {
          ptx::mbar_wait(empty + stage * 8, phase ^ 1u);
          const uint32_t fb = full + stage * 8;
          ptx::mbar_arrive_expect_tx(fb, S::kStageBytes);
          ptx::tma_load_3d(sA + stage * S::kABytes, &tmA, fb, kb * 64, w.tm * BM, w.batch);
          ptx::tma_load_3d(sB + stage * S::kBBytes, &tmB, fb, kb * 64, w.tn * BN, w.batch);
          if (++stage == ST) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // ---------------- consumer warpgroups ----------------
    ptx::setmaxnreg_inc<232>();
    const int cw = wg - 1;                 // 0 / 1: which BM/2 rows of the tile
    const int ct = threadIdx.x - 128;      // 0..255 across both consumers
    const int tid = threadIdx.x & 127;
    const int warp = tid >> 5, lane = tid & 31;
    const uint64_t descA0 = make_kmajor_sw128_desc(sA + cw * (BM / 2) * 128).pack();
    const uint64_t descB0 = make_kmajor_sw128_desc(sB).pack();
    float acc[S::kMT][S::kAcc];
    int stage = 0;
    uint32_t phase = 0;
    const bool vec_ok = (p.N % 2) == 0;
    uint32_t ebox = 0;  // epilogue boxes written by this warpgroup (selects the staging buffer)

    auto release = [&](int st) {
      if (lane == 0) ptx::mbar_arrive(empty + st * 8);
    };

    for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
      const WorkUnit w = work_unit(u, p.tiles_m, p.tiles_n, p.splits, p.group_m, p.nk);
      const int m0 = w.tm * BM, n0 = w.tn * BN;
      int prev = -1;
      for (int kb = w.kb0; kb < w.kb1; ++kb) {
        ptx::mbar_wait(full + stage * 8, phase);
        ptx::wgmma_fence();
#pragma unroll
        for (int k16 = 0; k16 < 4; ++k16) {
          const uint64_t db = descB0 + wgmma_desc_advance(stage * S::kBBytes + k16 * 32);
#pragma unroll
          for (int mt = 0; mt < S::kMT; ++mt) {
            const uint64_t da = descA0 + wgmma_desc_advance(stage * S::kABytes + mt * 64 * 128 + k16 * 32);
            WgmmaSS<BN>::mma(acc[mt], da, db, (kb != w.kb0 || k16 != 0) ? 1 : 0);
          }
        }
        ptx::wgmma_commit();
        ptx::wgmma_wait<1>();  // the group of the previous k-block is done: its stage may be refilled
        if (prev >= 0) release(prev);
        prev = stage;
        if (++stage == ST) {
          stage = 0;
          phase ^= 1u;
        }
      }
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int mt = 0; mt < S::kMT; ++mt) ptx::fence_regs(acc[mt]);
      if (prev >= 0) release(prev);

      if (p.splits > 1) {
        // partial slots and counters in row-major tile order
        const int tile = (w.batch * p.tiles_m + w.tm) * p.tiles_n + w.tn;
        float* ws_tile = p.ws + static_cast<size_t>(tile) * p.splits * (BM * BN);
        auto a = [&](int i) -> float& { return acc[i / S::kAcc][i % S::kAcc]; };
        if (!reduce_split_k<S::kMT * S::kAcc, false, SplitKBroadcast::SmemFlag>(
                a, ws_tile, w.split, p.splits, p.counters + tile, flag, ct))
          continue;
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
            if (tid == 0) ptx::bulk_wait_read<1>();  // the store that last read `buf` has finished reading
            ptx::named_bar_sync(2 + cw, 128);
            const int row = warp * 16 + i8 + 8 * (g8 & 1);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int c = bx * 8 + 2 * j;   // 8-column chunk of the fragment
              const int chunk = 2 * j + (g8 >> 1);
              ptx::stmatrix_x4(buf + row * 128 + ((chunk ^ i8) << 4),
                               ptx::pack_half2(acc[mt][4 * c], acc[mt][4 * c + 1]),
                               ptx::pack_half2(acc[mt][4 * c + 2], acc[mt][4 * c + 3]),
                               ptx::pack_half2(acc[mt][4 * c + 4], acc[mt][4 * c + 5]),
                               ptx::pack_half2(acc[mt][4 * c + 6], acc[mt][4 * c + 7]));
            }
            ptx::fence_proxy_async_smem();
            ptx::named_bar_sync(2 + cw, 128);
            if (tid == 0) {
              ptx::tma_store_3d(&tmC, buf, n0 + bx * 64, m0 + cw * (BM / 2) + mt * 64, w.batch);
              ptx::bulk_commit();
            }
            ++ebox;
          }
        }
        if constexpr (BN % 64 != 0) {
          // the last BN % 64 columns (N tiles in steps of 16): straight from the fragments,
          // masked at the edges (a 64-column box would write into the next tile)
#pragma unroll
          for (int mt = 0; mt < S::kMT; ++mt) {
            const int r0 = m0 + cw * (BM / 2) + mt * 64 + warp * 16 + (lane >> 2);
            const int c0 = n0 + 2 * (lane & 3);
#pragma unroll
            for (int c = (BN / 64) * 8; c < BN / 8; ++c) {
              store2(p.C, p, w.batch, r0, c0 + 8 * c, acc[mt][4 * c], acc[mt][4 * c + 1], vec_ok);
              store2(p.C, p, w.batch, r0 + 8, c0 + 8 * c, acc[mt][4 * c + 2], acc[mt][4 * c + 3], vec_ok);
            }
          }
        }
        continue;
      }

      // ---- epilogue: fragment (m64nBN f32 layout) -> fp16 global ----
      // acc[mt][4c + {0,1}] -> row r0,   cols n0 + 8c + 2*(lane%4) + {0,1}
      // acc[mt][4c + {2,3}] -> row r0+8, same cols;  r0 = m0 + cw*BM/2 + mt*64 + warp*16 + lane/4
      const bool full_tile = vec_ok && (m0 + BM <= p.M) && (n0 + BN <= p.N);
#pragma unroll
      for (int mt = 0; mt < S::kMT; ++mt) {
        const int r0 = m0 + cw * (BM / 2) + mt * 64 + warp * 16 + (lane >> 2);
        const int c0 = n0 + 2 * (lane & 3);
        if (full_tile) {
          __half* row0 = p.C + (static_cast<size_t>(w.batch) * p.M + r0) * static_cast<size_t>(p.N) + c0;
          __half* row1 = row0 + static_cast<size_t>(8) * p.N;
#pragma unroll
          for (int c = 0; c < BN / 8; ++c) {
            *reinterpret_cast<__half2*>(row0 + 8 * c) = __floats2half2_rn(acc[mt][4 * c], acc[mt][4 * c + 1]);
            *reinterpret_cast<__half2*>(row1 + 8 * c) = __floats2half2_rn(acc[mt][4 * c + 2], acc[mt][4 * c + 3]);
          }
        } else {
#pragma unroll
          for (int c = 0; c < BN / 8; ++c) {
            store2(p.C, p, w.batch, r0, c0 + 8 * c, acc[mt][4 * c], acc[mt][4 * c + 1], vec_ok);
            store2(p.C, p, w.batch, r0 + 8, c0 + 8 * c, acc[mt][4 * c + 2], acc[mt][4 * c + 3], vec_ok);
          }
        }
      }
    }
    if (tid == 0) ptx::bulk_wait<0>();  // staged C stores complete before the CTA's smem goes away
  }
#endif
}

}  // namespace nvfp4::sm90::mainloop
