// The sm90 fused path's kernel (sm_90a only): the warp-specialised structure of the fp16
// mainloop (mainloop_kernel.cuh) with B kept in FP4 until it reaches the registers of the MMA
// warps. Its launcher, with the A prepass, is fused.cu.
//
// C^T = B A^T: the wgmma "A" operand (64 rows x k16, RS form: registers) is a 64-row slice of B,
// the wgmma "B" operand (N = MT, the M tile) is A, decoded once per problem to fp16 by the
// prepass (decode_a_kernel in fused.cu, decode_frag's K order: its 128-row tiles are
// 128-byte swizzled, as the SW128 descriptor wants them).
//
// CTA: 384 threads = 3 warpgroups, one CTA per SM, persistent over work units (batch, M tile,
// 128-row N tile, K split), the grouped raster of schedule.cuh with bands of 8 M tiles.
//   * warp 0 is the producer (setmaxnreg 40): per ring stage (one 64-wide K block) lane 0 issues
//     the bulk copy of the stage's fp16 A slab (MT x 128 bytes) and all 32 lanes copy the raw
//     packed B rows (128 x 32 bytes, lane pairs take the two halves of a row so each instruction
//     moves whole 32-byte sectors) and their scale bytes (128 x 4) with cp.async, completed on
//     the stage's full mbarrier (1 expect_tx arrive + 32 cp.async.mbarrier.arrive.noinc);
//   * warpgroups 1, 2 are consumers (setmaxnreg 232), each owning 64 B rows (C columns). Per K
//     block: wgmma k is issued with fragment set X, wait_group 1 retires wgmma k-1 (its stage goes
//     back to the producer, fragment set Y is free), then the raw B of k+1 is read from shared
//     memory and decoded exactly (decode.hpp decode_frag: E2M1 x E4M3 is exact in fp16)
//     into set Y while wgmma k runs. Three register sets, unrolled by three so they stay fixed;
//   * split-K: reduce_split_k (schedule.cuh): every split stores its FP32 partial (fragment
//     order, coalesced), the last split of a tile to arrive sums all partials in split order
//     0..S-1 (bit-reproducible);
//   * epilogue: the C^T accumulators are written transposed (stmatrix .trans) into 128-byte
//     swizzled [rows x 64] boxes and stored by TMA (rows/columns past M/N clipped by the tensor
//     map), two boxes per warpgroup in flight; N % 8 != 0 falls back to masked stores.
// PDL: the producer issues the raw B of its first ring stages before griddepcontrol.wait (the A
// prepass is the grid this one depends on); the split-K counters, zeroed by the prepass, are
// touched only after the same wait.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/schedule.cuh"
#include "kernels/sm90/wgmma.hpp"

namespace nvfp4::sm90::fused {

struct Params {
  const uint8_t* b;    // raw packed B [L, N, K/2]
  const uint8_t* sfb;  // B scales, linear [L, N, K/16]
  const uint8_t* a16;  // prepass tiles [L][tiles128][nk][128 rows][128 B swizzled]
  __half* c;
  float* partial;      // split > 1: [tiles][split][128 * MT] FP32, fragment order
  int* counters;       // split > 1: [tiles], zeroed by the prepass, reset by each tile's last split
  int m, n, l;
  int nk;              // K / 64
  int kbytes;          // K / 2: raw B row pitch
  int kblocks;         // K / 16: scale row pitch
  int tiles128;        // 128-row prepass tiles per batch
  int tiles_m;         // MT-row M tiles per batch
  int tiles_n;         // 128-row N tiles per batch
  int split;
  int units;           // l * tiles_m * tiles_n * split
  int tma_store;       // 1: C through shared memory and TMA stores (N % 8 == 0, C 16-byte aligned)
};

// kFusedRowsN (B rows per tile, 64 per consumer warpgroup), kFusedGroup, kFusedATile: config.hpp
constexpr int kThreads = 384;
constexpr int kSmemLimit = 227 * 1024;

template <int MT>
struct Cfg {
  static_assert(MT == 16 || MT == 32 || MT == 64 || MT == 128 || MT == 256, "M tile");
  static constexpr int kABytes = MT * 128;        // MT rows x 64 fp16, swizzled (1024-multiple)
  static constexpr int kBBytes = kFusedRowsN * 32;     // raw B [128 rows][32 bytes]
  static constexpr int kSBytes = kFusedRowsN * 4;      // scales [128 rows][4]
  static constexpr int kStage = kABytes + kBBytes + kSBytes;
  static constexpr int kBoxRows = MT < 64 ? MT : 64;  // epilogue box: kBoxRows x 64 fp16
  static constexpr int kEpiBox = kBoxRows * 128;
  static constexpr int kEpiBytes = 2 * 2 * kEpiBox;   // two boxes per consumer warpgroup
  static constexpr int kFixed = 1024 + kEpiBytes + 256;
  static constexpr int kFit = (kSmemLimit - kFixed) / (kStage + 16);
  static constexpr int kStages = kFit < 16 ? kFit : 16;  // small tiles: more bytes in flight
  // Three fragment register sets: K block i+1 is decoded into set (i+1) % 3 while the wgmmas of
  // blocks i-1 and i run; then wait_group 1 retires block i-1. (Deeper waits with more sets made
  // ptxas serialise the wgmmas, C7513.)
  static constexpr int kSets = 3;
  static constexpr size_t kSmem = size_t(kFixed) + size_t(kStages) * (kStage + 16);
  static_assert(kStages >= kSets + 2 && kSmem <= size_t(kSmemLimit), "shared memory");
};

template <int MT>
__global__ void __launch_bounds__(kThreads, 1)
    fused_kernel(const __grid_constant__ CUtensorMap tmC, const Params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<MT>;
  constexpr int ST = C::kStages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // swizzled tiles need 1024-byte alignment
  const uint32_t sA = base;                       // ST x kABytes
  const uint32_t sE = sA + ST * C::kABytes;       // epilogue boxes (1024-multiple offsets)
  const uint32_t sB = sE + C::kEpiBytes;          // ST x raw B
  const uint32_t sS = sB + ST * C::kBBytes;       // ST x scales
  const uint32_t full = sS + ST * C::kSBytes;     // ST mbarriers
  const uint32_t empty = full + ST * 8;           // ST mbarriers
  int* flag = reinterpret_cast<int*>(smem_raw + (empty + ST * 8 - raw));

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      ptx::mbar_init(full + s * 8, 1 + 32);  // A's expect_tx arrive + the producer lanes' cp.async
      ptx::mbar_init(empty + s * 8, 256);    // every consumer thread (see release_oldest)
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    // ---------------- producer warp ----------------
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x < 32) {
      const int lane = threadIdx.x;
      auto issue_b = [&](const WorkUnit& x, int kb, int st) {
        const int64_t row0 = int64_t(x.batch) * p.n;
        const int n0 = x.tn * kFusedRowsN;
        const uint32_t db = sB + st * C::kBBytes + (lane >> 1) * 32 + (lane & 1) * 16;
        const uint32_t ds = sS + st * C::kSBytes + lane * 4;
        if (n0 + kFusedRowsN <= p.n) {  // whole tile inside B: one pointer per lane, constant strides
          const uint8_t* bp = p.b + (row0 + n0 + (lane >> 1)) * p.kbytes + kb * 32 + (lane & 1) * 16;
          const uint8_t* sp = p.sfb + (row0 + n0 + lane) * p.kblocks + kb * 4;
          const int64_t b16 = int64_t(16) * p.kbytes, s32 = int64_t(32) * p.kblocks;
#pragma unroll
          for (int j = 0; j < 8; ++j) ptx::cp_async16(db + j * 16 * 32, bp + j * b16);
#pragma unroll
          for (int j = 0; j < 4; ++j) ptx::cp_async4(ds + j * 32 * 4, sp + j * s32);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const int64_t row = row0 + min(n0 + 16 * j + (lane >> 1), p.n - 1);  // past N: unused copies
            ptx::cp_async16(db + j * 16 * 32, p.b + row * p.kbytes + kb * 32 + (lane & 1) * 16);
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int64_t row = row0 + min(n0 + 32 * j + lane, p.n - 1);
            ptx::cp_async4(ds + j * 32 * 4, p.sfb + row * p.kblocks + kb * 4);
          }
        }
        ptx::cp_async_mbar_arrive_noinc(full + st * 8);
      };
      auto issue_a = [&](const WorkUnit& x, int kb, int st) {  // lane 0
        const uint32_t fb = full + st * 8;
        ptx::mbar_arrive_expect_tx(fb, C::kABytes);
        if constexpr (MT >= 128) {
#pragma unroll
          for (int h = 0; h < MT / 128; ++h)
            ptx::bulk_copy(sA + st * C::kABytes + h * kFusedATile,
                          p.a16 + ((int64_t(x.batch) * p.tiles128 + x.tm * (MT / 128) + h) * p.nk + kb) *
                                      int64_t(kFusedATile),
                          kFusedATile, fb);
        } else {
          const int r0 = x.tm * MT;  // MT divides 128: the slab is rows r0 % 128.. of one tile
          ptx::bulk_copy(sA + st * C::kABytes,
                        p.a16 + ((int64_t(x.batch) * p.tiles128 + r0 / 128) * p.nk + kb) * int64_t(kFusedATile) +
                            (r0 % 128) * 128,
                        C::kABytes, fb);
        }
      };
      int u = blockIdx.x, kb = 0;
      WorkUnit x{};
      if (u < p.units) {
        x = work_unit(u, p.tiles_m, p.tiles_n, p.split, kFusedGroup, p.nk);
        kb = x.kb0;
      }
      // The first ST stages' raw B and scales do not depend on the prepass: issue them before
      // waiting for it, then their A slabs.
      {
        int u2 = u, kb2 = kb;
        WorkUnit x2 = x;
        for (int i = 0; i < ST && u2 < p.units; ++i) {
          issue_b(x2, kb2, i);
          if (++kb2 == x2.kb1) {
            u2 += gridDim.x;
            if (u2 < p.units) {
              x2 = work_unit(u2, p.tiles_m, p.tiles_n, p.split, kFusedGroup, p.nk);
              kb2 = x2.kb0;
            }
          }
        }
      }
      if (lane == 0) asm volatile("griddepcontrol.wait;\n" ::: "memory");
      __syncwarp();
      int stage = 0, q = 0;
      uint32_t phase = 0;
      while (u < p.units) {
        if (q >= ST) {
          ptx::mbar_wait(empty + stage * 8, phase ^ 1u);
          issue_b(x, kb, stage);
        }
        if (lane == 0) issue_a(x, kb, stage);
        __syncwarp();
        ++q;
        if (++stage == ST) {
          stage = 0;
          phase ^= 1u;
        }
        if (++kb == x.kb1) {
          u += gridDim.x;
          if (u < p.units) {
            x = work_unit(u, p.tiles_m, p.tiles_n, p.split, kFusedGroup, p.nk);
            kb = x.kb0;
          }
        }
      }
    }
  } else {
    // ---------------- consumer warpgroups ----------------
    ptx::setmaxnreg_inc<232>();
    const int cw = wg - 1;             // which 64 B rows of the tile
    const int ct = threadIdx.x - 128;  // 0..255 across both consumers
    const int tid = threadIdx.x & 127;
    const int wq = tid >> 5, lane = tid & 31, c4 = lane & 3;
    const int rloc = 64 * cw + 16 * wq + (lane >> 2);  // B rows rloc, rloc + 8 of the tile
    const uint32_t bofs = rloc * 32 + c4 * 8, sofs = rloc * 4 + c4;
    constexpr int NF = C::kSets;
    static_assert(NF == 3, "the loop below is unrolled for three sets");
    int stage = 0, rel = 0;  // next stage to consume, oldest stage not yet released
    uint32_t phase = 0;
    uint32_t ebox = 0;
    float acc[MT / 2];
    uint32_t fr[NF][4][4];

    // Every consumer thread releases the stage itself: its arrive (release semantics) orders its
    // own shared-memory reads of the stage before the producer's refill. One arrive per warp on
    // behalf of all lanes left the other lanes' reads unordered (racecheck: WAR hazards at every
    // stage reuse; docs/kernels.md, history).
    auto release_oldest = [&] {
      ptx::mbar_arrive(empty + rel * 8);
      if (++rel == ST) rel = 0;
    };
    // Waits for the next stage, decodes this thread's fragments of it (rows rloc / rloc + 8,
    // scale block c4: decode_frag's K order, the prepass's too) and returns its index.
    auto load_decode = [&](uint32_t(&fr)[4][4]) {
      const int st = stage;
      ptx::mbar_wait(full + st * 8, phase);
      if (++stage == ST) {
        stage = 0;
        phase ^= 1u;
      }
      const uint32_t b = sB + st * C::kBBytes + bofs;
      const uint2 w0 = ptx::ld_shared_v2(b), w1 = ptx::ld_shared_v2(b + 8 * 32);
      const uint32_t s = sS + st * C::kSBytes + sofs;
      const uint32_t sc = ptx::ld_shared_u8(s) | (ptx::ld_shared_u8(s + 8 * 4) << 8);
      decode_frag(w0, w1, sc, fr);
      return st;
    };

    for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
      const WorkUnit x = work_unit(u, p.tiles_m, p.tiles_n, p.split, kFusedGroup, p.nk);
      const int nkb = x.kb1 - x.kb0;
#pragma unroll
      for (int i = 0; i < MT / 2; ++i) acc[i] = 0.0f;
      int cur = load_decode(fr[0]);
      // K block i: issue its wgmmas (set i % NF), decode block i+1 into the next set (last read by
      // block i-2, retired one step ago) while blocks i-1 and i run, then wait_group 1 retires
      // block i-1 and its stage goes back to the producer. Unrolled by NF so the sets are fixed
      // registers.
      auto step = [&](int i, uint32_t(&f)[4][4], uint32_t(&fn)[4][4]) {
        const uint64_t d0 = ptx::make_desc_sw128(sA + cur * C::kABytes);
        ptx::fence_regs(f);
        ptx::wgmma_fence();
#pragma unroll
        for (int s = 0; s < 4; ++s) Wgmma<MT>::mma(acc, f[s], d0 + 2u * s);  // +32 bytes per k16
        ptx::wgmma_commit();
        if (i + 1 < nkb) cur = load_decode(fn);
        ptx::wgmma_wait<1>();
        if (i >= 1) release_oldest();
      };
      for (int i = 0;; i += NF) {
        step(i, fr[0], fr[1]);
        if (i + 1 >= nkb) break;
        step(i + 1, fr[1], fr[2]);
        if (i + 2 >= nkb) break;
        step(i + 2, fr[2], fr[0]);
        if (i + 3 >= nkb) break;
      }
      ptx::wgmma_wait<0>();
      ptx::fence_regs(acc);
      release_oldest();  // the last block

      // ---- split-K: the last split of the tile sums all partials in split order ----
      if (p.split > 1) {
        float* ws_tile = p.partial + static_cast<size_t>(x.order) * p.split * (kFusedRowsN * MT);
        auto a = [&](int i) -> float& { return acc[i]; };
        if (!reduce_split_k<MT / 2, true>(a, ws_tile, x.split, p.split, p.counters + x.order, flag, ct))
          continue;  // counters zeroed by the prepass: touched after griddepcontrol.wait
      }

      // ---- epilogue: accumulator (j, hh, e) = C^T (B row rloc + 8hh, A row 8j + 2*c4 + e) ----
      const int i0 = x.tm * MT;                     // first C row of the tile
      const int j0 = x.tn * kFusedRowsN + 64 * cw;       // first C column of this warpgroup
      if (p.tma_store) {
        const uint32_t ebase = sE + cw * (2 * C::kEpiBox);
        const int mi = lane >> 3, qr = lane & 7;    // stmatrix: this lane addresses row qr of matrix mi
#pragma unroll
        for (int bx = 0; bx < MT / C::kBoxRows; ++bx) {
          // Boxes past M or a warpgroup past N store nothing: stop before staging them, so
          // every staged box has its own bulk group (bulk_wait_read<1> below relies on it).
          if (i0 + bx * C::kBoxRows >= p.m || j0 >= p.n) break;
          const uint32_t buf = ebase + (ebox & 1) * C::kEpiBox;
          if (tid == 0) ptx::bulk_wait_read<1>();  // the store that last read `buf` is done reading
          ptx::named_bar_sync(2 + cw, 128);
#pragma unroll
          for (int g = 0; g < C::kBoxRows / 16; ++g) {
            const int j = bx * (C::kBoxRows / 8) + 2 * g;  // 8-row groups j, j+1 of the box's C rows
            const int row = 16 * g + 8 * (mi >> 1) + qr;    // C row within the box
            const int chunk = 2 * wq + (mi & 1);            // 8 C columns: B rows 16wq + 8hh ..
            ptx::stmatrix_x4_trans(buf + row * 128 + ((chunk ^ (row & 7)) << 4),
                                  ptx::pack_half2(acc[4 * j] * kAccUnscale, acc[4 * j + 1] * kAccUnscale),
                                  ptx::pack_half2(acc[4 * j + 2] * kAccUnscale, acc[4 * j + 3] * kAccUnscale),
                                  ptx::pack_half2(acc[4 * j + 4] * kAccUnscale, acc[4 * j + 5] * kAccUnscale),
                                  ptx::pack_half2(acc[4 * j + 6] * kAccUnscale, acc[4 * j + 7] * kAccUnscale));
          }
          ptx::fence_proxy_async_smem();
          ptx::named_bar_sync(2 + cw, 128);
          if (tid == 0) {
            ptx::tma_store_3d(&tmC, buf, j0, i0 + bx * C::kBoxRows, x.batch);
            ptx::bulk_commit();
          }
          ++ebox;
        }
        continue;
      }
      // masked stores (N % 8 != 0): one fp16 per accumulator
#pragma unroll
      for (int j = 0; j < MT / 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int row = i0 + 8 * j + 2 * c4 + e, col = x.tn * kFusedRowsN + rloc + 8 * hh;
            if (row < p.m && col < p.n)
              p.c[(static_cast<size_t>(x.batch) * p.m + row) * static_cast<size_t>(p.n) + col] =
                  __float2half_rn(acc[4 * j + 2 * hh + e] * kAccUnscale);
          }
    }
    if (tid == 0) ptx::bulk_wait<0>();  // staged C stores complete before the CTA's smem goes away
  }
#else
  (void)tmC;
  (void)p;
#endif
}

}  // namespace nvfp4::sm90::fused
