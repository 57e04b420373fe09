// The sm90 v2 kernel (sm_90a only): warp-specialised. One CTA = NP + 2 warpgroups
// computing a 128 (M) x BN (N) tile of C over a contiguous range of 64-wide K granules.
//
//   WG0 (or WG0-1, NP = 2), producers (B rows pt, pt + 128*NP, ...): cp.async ring (R stages, each thread loads and later decodes only its own rows,
//        so the ring needs no barrier: cp.async.wait_group per thread) of raw E2M1 B bytes and
//        linear E4M3 scales; decodes them (sm90_decode.hpp bit trick, block scale applied) into
//        the 128-byte-swizzled fp16 B tile of a decoded slot (D slots). A reaches its own ring
//        either (kAMode 0) as one 16 KB bulk copy (cp.async.bulk + mbarrier complete_tx on
//        afull[slot], issued RA - D granules ahead) of the pre-decoded, pre-swizzled A tile
//        written by the prepass kernel (decode_a_kernel), or (kAMode 1) decoded per tile by the
//        producers like B. Hand-off: full[slot] mbarrier.
//   the last 2 WGs, consumers: rows 0-63 / 64-127 of the tile; per granule they
//        wait full[slot] (and afull), issue
//        4 wgmma m64nBNk16 SS (both operands by descriptor), keep one granule in flight
//        (wait_group 1) and release the previous slot through empty[slot].
// No CTA-wide barrier in the main loop. Split-K: the `split` CTAs of a tile form one cluster
// along grid y; each stages its FP32 accumulators in its own shared memory, and CTA r sums rows
// slice r of all partials in rank order through distributed shared memory (fixed order, so
// bit-reproducible, and no global workspace or second launch).
//
// K order inside a granule: identical to v1 (sm90_kernel.cuh): logical column j = 8u + 2c + h
// of k-step s is physical K 16c + 8u + 4h + s, for A and B alike.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/sm90/sm90_decode.hpp"
#include "kernels/sm90/sm90_kernel.cuh"
#include "kernels/sm90/sm90_wgmma.hpp"

namespace nvfp4::sm90::v2 {

struct Params {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;  // linear [L, M, K/16]
  const uint8_t* sfb;  // linear [L, N, K/16]
  const uint8_t* a16;  // kAMode 0: decoded A tiles [L][tiles_m][nk][128 rows][128 B swizzled]
  __half* c;
  int64_t m, n, k, l;
  int nk;   // K / 64
  int cps;  // K granules per split
  int split;
  int tiles_m;
  int* counters = nullptr;  // v3 split-K tile counters, zeroed by the prepass (else null)
  int ncounters = 0;
  int sg = 1;  // prepass K order: 1 = per granule (v1/v2/v3), 4 = v3 super-granules
};

// NP producer warpgroups + 2 consumer warpgroups. NP = 2 caps registers at 128 per thread
// (64K / 512; ptxas allocates for the whole kernel), which fits accumulators up to BN = 192.
template <int NP>
constexpr int threads_for() {
  return 128 * (NP + 2);
}
constexpr int kMaxSplit = 8;  // portable cluster size (split-K CTAs of a tile = one cluster)
constexpr int kATile = 128 * 128;  // bytes of one decoded A granule tile (128 rows x 64 fp16)

// Shared memory: [A ring RA x 16 KB][B slots D x BN*128][raw ring R x kRaw][mbarriers].
// A has its own, deeper ring (kAMode 0) so its bulk copies are issued RA - D granules before the
// producer reaches that granule: the L2 latency of the 16 KB copy hides behind RA - 1 granules.
template <int BN, int kAMode>
struct Cfg {
  static constexpr int kBSlot = BN * 128;                      // decoded B
  static constexpr int kRawB = BN * 32;                        // [2 halves][BN][16]
  static constexpr int kRawBs = BN * 4;                        // [BN][4]
  static constexpr int kRawA = kAMode == 1 ? 128 * 32 : 0;     // [2][128][16]
  static constexpr int kRawAs = kAMode == 1 ? 128 * 4 : 0;     // [128][4]
  static constexpr int kRaw = kRawB + kRawBs + kRawA + kRawAs;
  static constexpr int R = BN <= 128 ? 6 : 4;                  // raw stages (lookahead R-1)
  static constexpr int D = BN <= 128 ? 4 : 3;                  // decoded B slots
  static constexpr int RA = kAMode == 0 ? D + 2 : D;           // A slots
  static constexpr int kPitch = BN + 8;                        // split-K staging row (floats)
  static constexpr int kBOff = RA * kATile;
  static constexpr int kRawOff = kBOff + D * kBSlot;
  static constexpr int kBarOff = kRawOff + R * kRaw;
  static constexpr size_t kSmem = 1024 + size_t(kBarOff) + 256;
  static_assert(kSmem <= 227 * 1024, "shared memory");
  static_assert(kRaw % 16 == 0, "raw stage alignment");
  static_assert(size_t(128) * kPitch * 4 <= size_t(kRawOff), "split-K staging must fit");
};

namespace dev {

using sm90::dev::cp_async16;
using sm90::dev::cp_async4;
using sm90::dev::cp_async_commit;
using sm90::dev::cp_async_wait;
using sm90::dev::fence_acc;
using sm90::dev::fence_proxy_async;
using sm90::dev::make_desc_sw128;
using sm90::dev::wgmma_commit;
using sm90::dev::wgmma_fence;
using sm90::dev::wgmma_wait;

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_LOOP:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_LOOP;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// One contiguous global -> shared copy completed on an mbarrier (transaction bytes).
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}
__device__ __forceinline__ uint32_t map_rank(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ float4 ld_cluster_f4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

// One row's 64-K granule: raw bytes lo (K 0-31) / hi (K 32-63), four scale bytes, decoded into
// the eight 16-byte chunks of its K-major fp16 row; chunk q = 2s + u holds logical columns
// 8u..8u+7 of k-step s (word c of the chunk = block c). store(q, chunk) places it (swizzle).
template <class Store>
__device__ __forceinline__ void decode_row(uint4 lo, uint4 hi, uint32_t sc4, Store&& store) {
  const uint32_t m01 = scale2_boosted(sc4 & 0xFFFFu), m23 = scale2_boosted(sc4 >> 16);
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

}  // namespace dev

// kDiag (bench timing experiments only, results are garbage): bit 0 = the producer skips the
// decode (raw loads, barriers and A copies stay), bit 1 = consumers skip the wgmmas, bit 2 = the
// producer skips its proxy fence.
template <int BN, int kAMode, int kDiag = 0, int NP = 1>
__global__ void __launch_bounds__(threads_for<NP>(), 1) ws_kernel(const Params p) {
#if defined(NVFP4_SM90_DEVICE) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<BN, kAMode>;
  constexpr int D = C::D, R = C::R, RA = C::RA;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw_s = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t base = (raw_s + 1023u) & ~1023u;  // swizzled tiles need 1024-byte alignment
  const uint32_t aslots = base;                    // RA x kATile
  const uint32_t bslots = base + C::kBOff;         // D x kBSlot
  const uint32_t ring = base + C::kRawOff;         // R x kRaw
  const uint32_t bars = base + C::kBarOff;         // full[D], empty[D], afull[RA]
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (D + s); };
  auto afull = [&](int s) { return bars + 8u * (2 * D + s); };

  const int tid = threadIdx.x;
  const int wg = tid >> 7;
  const int tm = static_cast<int>(blockIdx.x % p.tiles_m);
  const int tn = static_cast<int>(blockIdx.x / p.tiles_m);
  const int64_t batch = blockIdx.z;
  const int64_t i0 = int64_t(tm) * 128, j0 = int64_t(tn) * BN;
  const int kc0 = static_cast<int>(blockIdx.y) * p.cps;
  const int nkc = max(0, min(p.nk - kc0, p.cps));

  if (tid == 0) {
    for (int s = 0; s < D; ++s) {
      dev::mbar_init(full(s), 128 * NP);
      dev::mbar_init(empty(s), 8);
    }
    for (int s = 0; s < RA; ++s) dev::mbar_init(afull(s), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

  if (wg < NP) {
    // ---------------- producers (128*NP threads; B rows pt, pt + 128*NP, ...) ----------------
    using namespace dev;
    const int pt = tid;
    constexpr int kStride = 128 * NP;
    constexpr int kRows = (BN + kStride - 1) / kStride;
    const bool has_a = kAMode == 1 && pt < 128;
    const int64_t kbytes = p.k / 2, kblocks = p.k / 16;
    const uint8_t* bsrc[kRows];
    const uint8_t* bssrc[kRows];
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
      const int64_t brow = min(j0 + pt + kStride * q, p.n - 1);  // past N: garbage, not stored
      bsrc[q] = p.b + (batch * p.n + brow) * kbytes + int64_t(kc0) * 32;
      bssrc[q] = p.sfb + (batch * p.n + brow) * kblocks + int64_t(kc0) * 4;
    }
    const int64_t arow = min(i0 + (pt & 127), p.m - 1);
    const uint8_t* asrc = p.a + (batch * p.m + arow) * kbytes + int64_t(kc0) * 32;
    const uint8_t* assrc = p.sfa + (batch * p.m + arow) * kblocks + int64_t(kc0) * 4;

    auto load = [&](int it) {  // granule kc0 + it into raw stage it % R (this thread's rows)
      const uint32_t st = ring + (it % R) * C::kRaw;
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        const int n = pt + kStride * q;
        if (BN % kStride == 0 || n < BN) {
          cp_async16(st + n * 16, bsrc[q] + int64_t(it) * 32);
          cp_async16(st + BN * 16 + n * 16, bsrc[q] + int64_t(it) * 32 + 16);
          cp_async4(st + C::kRawB + n * 4, bssrc[q] + int64_t(it) * 4);
        }
      }
      if (has_a) {
        const uint32_t sa = st + C::kRawB + C::kRawBs;
        cp_async16(sa + pt * 16, asrc + int64_t(it) * 32);
        cp_async16(sa + 128 * 16 + pt * 16, asrc + int64_t(it) * 32 + 16);
        cp_async4(sa + C::kRawA + pt * 4, assrc + int64_t(it) * 4);
      }
    };
    const uint8_t* a16 =
        p.a16 + ((batch * p.tiles_m + tm) * int64_t(p.nk) + kc0) * int64_t(kATile);
    auto load_a16 = [&](int g) {  // kAMode 0, thread 0: decoded A granule g -> A slot g % RA
      mbar_arrive_expect_tx(afull(g % RA), kATile);
      bulk_copy(aslots + (g % RA) * kATile, a16 + int64_t(g) * kATile, kATile, afull(g % RA));
    };
#pragma unroll
    for (int s = 0; s < R - 1; ++s) {
      if (s < nkc) load(s);
      cp_async_commit();
    }
    if (kAMode == 0 && pt == 0) {
      asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the prepass wrote a16
      for (int g = 0; g < RA - D && g < nkc; ++g) load_a16(g);
    }
    for (int it = 0; it < nkc; ++it) {
      if (it + R - 1 < nkc) load(it + R - 1);
      cp_async_commit();
      cp_async_wait<R - 1>();  // this thread's granule `it` landed
      const int slot = it % D;
      // Granule it-D released: frees B slot `slot` and A slot (it-D) % RA = (it+RA-D) % RA.
      if (it >= D) mbar_wait(empty(slot), ((it / D) - 1) & 1);
      if (kAMode == 0 && pt == 0 && it + RA - D < nkc) load_a16(it + RA - D);
      const uint32_t st = ring + (it % R) * C::kRaw;
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        const int n = pt + kStride * q;
        if ((kDiag & 1) == 0 && (BN % kStride == 0 || n < BN)) {
          const uint4 lo = ld_shared_v4(st + n * 16), hi = ld_shared_v4(st + BN * 16 + n * 16);
          const uint32_t sc = ld_shared_u32(st + C::kRawB + n * 4);
          const uint32_t row = bslots + slot * C::kBSlot + n * 128;
          const int sw = n & 7;
          decode_row(lo, hi, sc, [&](int ch, uint4 v) { st_shared_v4(row + ((ch ^ sw) << 4), v); });
        }
      }
      if (has_a) {  // kAMode 1: A row pt into A slot it % RA (RA == D)
        const uint32_t sa = st + C::kRawB + C::kRawBs;
        const uint4 lo = ld_shared_v4(sa + pt * 16), hi = ld_shared_v4(sa + 128 * 16 + pt * 16);
        const uint32_t sc = ld_shared_u32(sa + C::kRawA + pt * 4);
        const uint32_t row = aslots + (it % RA) * kATile + pt * 128;
        const int sw = pt & 7;
        decode_row(lo, hi, sc, [&](int ch, uint4 v) { st_shared_v4(row + ((ch ^ sw) << 4), v); });
      }
      if ((kDiag & 4) == 0) fence_proxy_async();  // generic-proxy writes -> visible to wgmma
      mbar_arrive(full(slot));
    }
    cp_async_wait<0>();
  } else {
    // ---------------- consumers ----------------
    using namespace dev;
    const int cw = wg - NP;  // rows 64*cw .. 64*cw+63
    const int lane = tid & 31;
    for (int it = 0; it < nkc; ++it) {
      const int slot = it % D, aslot = it % RA;
      mbar_wait(full(slot), (it / D) & 1);
      if (kAMode == 0) mbar_wait(afull(aslot), (it / RA) & 1);
      const uint32_t sa = aslots + aslot * kATile + cw * 8192;
      const uint32_t sb = bslots + slot * C::kBSlot;
      uint64_t da[4], db[4];
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        da[s] = make_desc_sw128(sa + s * 32);
        db[s] = make_desc_sw128(sb + s * 32);
        asm volatile("" : "+l"(da[s]), "+l"(db[s])::"memory");
      }
      fence_acc(acc);
      wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s)
        if ((kDiag & 2) == 0) WgmmaSS<BN>::mma(acc, da[s], db[s]);
      wgmma_commit();
      fence_acc(acc);
      wgmma_wait<1>();  // granule it-1 retired: its slots are free
      if (it > 0 && lane == 0) mbar_arrive(empty((it - 1) % D));
    }
    wgmma_wait<0>();
    fence_acc(acc);
  }

  const int warp = (tid >> 5) & 3, lane = tid & 31;
  const int r_local = 64 * (wg - NP) + 16 * warp + (lane >> 2);
  const int c4 = lane & 3;
  if (p.split == 1) {
    if (wg < NP) return;
    // accumulator register 4j + 2hh + e holds (row r_local + 8hh, col 8j + 2(lane%4) + e)
    const bool pairs = (p.n % 2) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int64_t col = j0 + 8 * j + 2 * c4;
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int64_t row = i0 + r_local + 8 * hh;
        if (row >= p.m || col >= p.n) continue;
        const float v0 = acc[4 * j + 2 * hh] * kAccUnscale;
        const float v1 = acc[4 * j + 2 * hh + 1] * kAccUnscale;
        __half* cp = p.c + (batch * p.m + row) * p.n + col;
        if (pairs) {
          *reinterpret_cast<__half2*>(cp) = __floats2half2_rn(v0, v1);
        } else {
          cp[0] = __float2half_rn(v0);
          if (col + 1 < p.n) cp[1] = __float2half_rn(v1);
        }
      }
    }
    return;
  }

  // ---------------- split-K: cluster reduction through distributed shared memory ----------------
  __syncthreads();  // every wgmma retired and every producer write consumed: slots are free
  const uint32_t stage = base;  // [128][kPitch] floats over the A ring and B slots
  if (wg >= NP) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const uint32_t addr = stage + ((r_local + 8 * hh) * C::kPitch + 8 * j + 2 * c4) * 4;
        asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(acc[4 * j + 2 * hh]),
                     "f"(acc[4 * j + 2 * hh + 1])
                     : "memory");
      }
  }
  dev::cluster_sync();
  const int S = p.split;
  const int rank = static_cast<int>(dev::cluster_rank());
  const int rows_per = (128 + S - 1) / S;
  const int r_begin = rank * rows_per, r_end = min(128, r_begin + rows_per);
  constexpr int kQuads = BN / 4;
  const bool vec = (p.n % 4) == 0;
  for (int x = tid; x < (r_end - r_begin) * kQuads; x += threads_for<NP>()) {
    const int r = r_begin + x / kQuads, q4 = x % kQuads;
    const int64_t row = i0 + r, col = j0 + 4 * q4;
    if (row >= p.m || col >= p.n) continue;
    const uint32_t local = stage + (r * C::kPitch + 4 * q4) * 4;
    float4 s = dev::ld_cluster_f4(dev::map_rank(local, 0));
    for (int q = 1; q < S; ++q) {
      const float4 v = dev::ld_cluster_f4(dev::map_rank(local, q));
      s.x += v.x;
      s.y += v.y;
      s.z += v.z;
      s.w += v.w;
    }
    __half* cp = p.c + (batch * p.m + row) * p.n + col;
    const __half2 lo = __floats2half2_rn(s.x * kAccUnscale, s.y * kAccUnscale);
    const __half2 hi = __floats2half2_rn(s.z * kAccUnscale, s.w * kAccUnscale);
    if (vec) {
      uint2 out;
      out.x = *reinterpret_cast<const uint32_t*>(&lo);
      out.y = *reinterpret_cast<const uint32_t*>(&hi);
      *reinterpret_cast<uint2*>(cp) = out;
    } else {
      const __half h[4] = {__low2half(lo), __high2half(lo), __low2half(hi), __high2half(hi)};
      for (int e = 0; e < 4 && col + e < p.n; ++e) cp[e] = h[e];
    }
  }
  dev::cluster_sync();  // no CTA leaves while a peer still reads its shared memory
#else
  (void)p;
#endif
}

// Prepass (kAMode 0): A decoded once per problem into the tile layout the main kernel copies
// with one bulk copy per granule: a16[L][tiles_m][nk][128 rows][8 chunks of 16 B], chunk q of
// row r stored at q ^ (r % 8) (the 128-byte swizzle), rows past M zero. One thread per
// (row, granule), rows fastest.
__global__ void decode_a_kernel(const Params p);

template <int BN, int kAMode, int kDiag = 0, int NP = 1>
void launch_ws(const Params& p, dim3 grid, bool pdl, cudaStream_t stream);
template <int BN, int kAMode>
int max_active_clusters(int split);

}  // namespace nvfp4::sm90::v2
