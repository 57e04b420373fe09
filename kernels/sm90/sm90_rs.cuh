// The sm90 v3 kernel (sm_90a only): operands swapped so the decode runs where the MMA runs.
//
// C^T = B A^T: the wgmma "A" operand (64 rows x k16, from REGISTERS) is a 64-row slice of B,
// decoded by the consumer threads themselves straight from global memory (each thread loads the
// raw bytes and scale bytes of its two rows' blocks and decodes them into the four f16x2
// registers of each k-step: sm90_decode.hpp decode_frag, the K order of sm90_kernel.cuh, over
// 4-granule super-granules when K % 256 == 0, see the consumer loop). The
// wgmma "B" operand (N = MT = the M tile, 128 or 256) is A, decoded once per problem by the v2
// prepass (decode_a_kernel) into 128-byte-swizzled fp16 tiles and brought into a shared-memory
// ring by bulk copies (mbarrier complete_tx) that consumer thread 0 issues.
//
// Why: v2 decoded B in one producer warpgroup (one warp per SMSP), which is latency bound
// (bench/notes-sm90.md). Here every consumer warp decodes its own fragments, 8 warps per SM,
// with no shared-memory round trip, no proxy fence and no hand-off barrier for B; the raw loads
// run several granules ahead into registers (kPf, or kBufs super-granules).
//
// CTA: 2 warpgroups (B rows 0-63 / 64-127 of the tile).
// Persistent: grid = resident CTAs, each walks work units u = blockIdx.x, +gridDim.x, ...;
// unit = (batch, M tile, N tile, K split), grouped raster (kGroup M tiles per band) so a wave
// reuses A and B tiles in L2. Split-K: every split writes its FP32 partial (fragment order,
// coalesced) to the workspace and bumps the tile's counter; the last split to arrive sums all
// partials in split order (bit-reproducible whoever is last) and writes C. The counters are
// zeroed by the prepass of the same call.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/sm90/sm90_decode.hpp"
#include "kernels/sm90/sm90_kernel.cuh"
#include "kernels/sm90/sm90_wgmma.hpp"
#include "kernels/sm90/sm90_ws.cuh"

namespace nvfp4::sm90::v3 {

struct Params {
  const uint8_t* b;
  const uint8_t* sfb;  // linear [L, N, K/16]
  const uint8_t* a16;  // prepass tiles [L][tiles128][nk][128 rows][128 B swizzled]
  __half* c;
  float* partial;      // split > 1: [tiles][split][128 * MT] FP32, fragment order
  int* counters;       // split > 1: [tiles], zero on entry (prepass)
  int64_t m, n, k, l;
  int nk;              // K / 64
  int cps;             // granules per split
  int split;
  int tiles128;        // 128-row A tiles per batch in a16 (a multiple of MT / 128)
  int tiles_m;         // MT-row tiles per batch
  int tiles_n;         // 128-row B tiles per batch
  int units;           // l * tiles_m * tiles_n * split
};

constexpr int kW = 2;                      // consumer warpgroups
constexpr int kRowsN = 64 * kW;            // B rows (C columns) per tile
constexpr int kThreads = 128 * kW;
constexpr int kPf = 4;                     // K % 256 != 0: raw-B lookahead in granules (= unroll)
constexpr int kGroup = 8;                  // M tiles per raster band
constexpr int kATileBytes = 128 * 128;     // one prepass tile granule (128 rows x 64 fp16)

template <int MT>
struct Cfg {
  static_assert(MT == 128 || MT == 256, "M tile");
  static constexpr int kASlot = MT * 128;            // MT rows x 64 fp16, swizzled
  static constexpr int RA = MT == 128 ? 8 : 4;       // A ring slots
  static constexpr int kEpiPitch = 144;              // bytes per staged C row (64 fp16 + pad)
  static constexpr int kEpiOff = RA * kASlot;
  static constexpr int kEpi = kW * MT * kEpiPitch;   // [W][MT rows][pitch]
  static constexpr int kBarOff = kEpiOff + kEpi;
  static constexpr size_t kSmem = 1024 + size_t(kBarOff) + 256;
  static_assert(kSmem <= 227 * 1024, "shared memory");
};

struct Unit {
  int64_t batch;
  int tm, tn, tile, ks, kc0, nkc;
};

__device__ __forceinline__ Unit unit_of(const Params& p, int u) {
  Unit x;
  x.ks = u % p.split;
  x.tile = u / p.split;
  const int per_batch = p.tiles_m * p.tiles_n;
  x.batch = x.tile / per_batch;
  const int r = x.tile % per_batch;
  const int band = r / (kGroup * p.tiles_n), within = r % (kGroup * p.tiles_n);
  const int first = band * kGroup;
  const int gm = min(kGroup, p.tiles_m - first);
  x.tm = first + within % gm;
  x.tn = within / gm;
  x.kc0 = x.ks * p.cps;
  x.nkc = min(p.nk - x.kc0, p.cps);
  return x;
}

namespace dev {
using namespace sm90::dev;
using v2::dev::bulk_copy;
using v2::dev::mbar_arrive;
using v2::dev::mbar_arrive_expect_tx;
using v2::dev::mbar_init;
using v2::dev::mbar_wait;

__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

struct Raw {
  uint2 w0, w1;
  uint32_t s0, s1;
};
struct RawS {  // one super-granule: rows r / r+8, 32 bytes and 4 scale bytes each
  uint4 a0, a1, b0, b1;
  uint32_t s0, s1;
};
}  // namespace dev

// kDiag (bench timing experiments only, results are garbage): bit 0 = no A copies and no wait
// for them (the wgmmas read stale shared memory), bit 1 = no decode (raw words as fragments),
// bit 2 = no raw-B loads (constant words): 7 times the bare wgmma loop.
template <int MT, int kDiag = 0, int kSG = 4, int kBufs = 2>
__global__ void __launch_bounds__(kThreads, 1) rs_kernel(const Params p) {
#if defined(NVFP4_SM90_DEVICE) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<MT>;
  constexpr int RA = C::RA;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw_s = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t base = (raw_s + 1023u) & ~1023u;  // swizzled tiles need 1024-byte alignment
  const uint32_t aslots = base;
  const uint32_t epi = base + C::kEpiOff;
  const uint32_t bars = base + C::kBarOff;  // afull[RA], empty[RA]
  auto afull = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (RA + s); };
  __shared__ int last_flag;

  const int tid = threadIdx.x;
  // The consumers walk super-granules whole: a split that is not a multiple of 4 granules
  // would wait forever for A granules the producer never issues. Fail loudly instead.
  if (kSG == 4 && (p.cps % 4 != 0 || p.nk % 4 != 0)) __trap();
  if (tid == 0) {
    for (int s = 0; s < RA; ++s) {
      dev::mbar_init(afull(s), 1);
      dev::mbar_init(empty(s), 4 * kW);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // A producer: thread 0 walks the CTA's (unit, granule) sequence with its own cursor and keeps
  // the ring filled up to RA - 2 granules ahead of consumption. Refilling the slot consumed two
  // granules ago (not one) means every warp has already released it at its previous step, so
  // thread 0 rarely waits and the two warpgroups stay loosely coupled. A dedicated producer warp
  // would cost the consumers registers: 9 warps put 3 on one SMSP, capping them at 168.
  struct Cursor {
    int u, g, q, nkc;
    const uint8_t* src;
  } pc{static_cast<int>(blockIdx.x), 0, 0, 0, nullptr};
  auto produce_until = [&](int qend) {  // thread 0 only
    while ((kDiag & 1) == 0 && pc.q < qend && pc.u < p.units) {
      if (pc.src == nullptr) {
        const Unit x = unit_of(p, pc.u);
        pc.nkc = x.nkc;
        pc.src = p.a16 + ((x.batch * p.tiles128 + int64_t(x.tm) * (MT / 128)) * p.nk + x.kc0) *
                             int64_t(kATileBytes);
      }
      const int slot = pc.q % RA;
      if (pc.q >= RA) dev::mbar_wait(empty(slot), ((pc.q / RA) - 1) & 1);
      dev::mbar_arrive_expect_tx(afull(slot), C::kASlot);
#pragma unroll
      for (int h = 0; h < MT / 128; ++h)
        dev::bulk_copy(aslots + slot * C::kASlot + h * kATileBytes,
                       pc.src + (int64_t(h) * p.nk + pc.g) * kATileBytes, kATileBytes, afull(slot));
      ++pc.q;
      if (++pc.g == pc.nkc) {
        pc.g = 0;
        pc.src = nullptr;
        pc.u += gridDim.x;
      }
    }
  };
  if (tid == 0) {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the prepass wrote a16
    produce_until(RA);
  }
  __syncwarp();

  // ---------------- consumers ----------------
  const int wg = tid >> 7, wq = (tid >> 5) & 3, lane = tid & 31, c4 = lane & 3;
  const int rloc = 64 * wg + 16 * wq + (lane >> 2);  // B rows rloc, rloc + 8 of the tile
  const int64_t kbytes = p.k / 2, kblocks = p.k / 16;
  int q = 0;  // position in the A ring (the producer walks the same sequence)
  for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
    const Unit x = unit_of(p, u);
    const int64_t i0 = int64_t(x.tm) * MT, j0 = int64_t(x.tn) * kRowsN;
    const int64_t n0 = min(j0 + rloc, p.n - 1), n1 = min(j0 + rloc + 8, p.n - 1);  // past N: unused
    // kSG = 1: lane c4 owns scale block c4 of every granule (8 bytes + 1 scale byte per row).
    // kSG = 4: K order permuted over 4-granule super-granules so lane c4 owns the contiguous
    // 32 bytes (and 4 scale bytes) c4 of each row's 128-byte super-granule: one 16-byte load
    // pair per row per 4 granules instead of 4 x 8-byte loads, a quarter of the L1 wavefronts
    // (the raw-B loads cost ~20 % at 4096^3 in the diagnostics). The prepass matches it.
    const uint8_t* b0 = p.b + (x.batch * p.n + n0) * kbytes + int64_t(x.kc0) * 32 + c4 * 8 * kSG;
    const uint8_t* b1 = p.b + (x.batch * p.n + n1) * kbytes + int64_t(x.kc0) * 32 + c4 * 8 * kSG;
    const uint8_t* s0 = p.sfb + (x.batch * p.n + n0) * kblocks + int64_t(x.kc0) * 4 + c4 * kSG;
    const uint8_t* s1 = p.sfb + (x.batch * p.n + n1) * kblocks + int64_t(x.kc0) * 4 + c4 * kSG;
    const int nkc = x.nkc;

    float acc[MT / 2];
#pragma unroll
    for (int i = 0; i < MT / 2; ++i) acc[i] = 0.0f;
    uint32_t fr0[4][4], fr1[4][4];

    // Granule g: decode (w0, w1, scales) into a fragment set, `refill` the raw registers just
    // consumed, wait for A, 4 wgmmas, keep one granule in flight and release the previous
    // granule's A slot.
    auto step = [&](int g, uint2 w0, uint2 w1, uint32_t sc01, uint32_t(&fr)[4][4], auto&& refill) {
      if (kDiag & 2) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          // one multiply per register (by 1.0) so the fragments are fresh registers, not the
          // raw ones the next load overwrites (that would serialise the wgmmas, C7513)
          fr[s][0] = hmul2_bits(w0.x, 0x3C003C00u);
          fr[s][1] = hmul2_bits(w1.x, 0x3C003C00u);
          fr[s][2] = hmul2_bits(w0.y, 0x3C003C00u);
          fr[s][3] = hmul2_bits(w1.y ^ sc01, 0x3C003C00u);
        }
      } else {
        decode_frag(w0, w1, sc01, fr);
      }
      refill();
      const int slot = q % RA;
      if ((kDiag & 1) == 0) dev::mbar_wait(afull(slot), (q / RA) & 1);
      // k-step s starts 32 bytes (2 descriptor units) into the slot's 128-byte rows; one
      // descriptor plus small adds, which the compiler keeps in the uniform datapath (~8 fewer
      // uniform instructions per granule than building four: 1-2 % on every shape,
      // commit c0ec880, bench/results/h200/sm90-dev/run9-v3-smemb/g-*).
      const uint64_t d0 = dev::make_desc_sw128(aslots + slot * C::kASlot);
      uint64_t da[4];
#pragma unroll
      for (int s = 0; s < 4; ++s) da[s] = d0 + 2u * s;
      dev::fence_frag(fr);
      dev::fence_acc(acc);
      dev::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) Wgmma<MT>::mma(acc, fr[s], da[s]);
      dev::wgmma_commit();
      dev::fence_acc(acc);
      dev::wgmma_wait<1>();  // granule g-1 retired: its A slot and fragment set are free
      if (g > 0 && lane == 0) dev::mbar_arrive(empty((q + RA - 1) % RA));
      if (tid == 0) produce_until(q + RA - 1);  // refills the slot of position q - 2
      __syncwarp();
      ++q;
    };
    auto nothing = [] {};

    if constexpr (kSG == 1) {
      auto load = [&](dev::Raw& r, int g) {
        if (kDiag & 4) {  // no loads: constant operands
          r = dev::Raw{make_uint2(0x22222222u * (g & 3), 0x1u), make_uint2(0x3u, 0x4u), 0x38u, 0x38u};
          return;
        }
        r.w0 = __ldg(reinterpret_cast<const uint2*>(b0 + int64_t(g) * 32));
        r.w1 = __ldg(reinterpret_cast<const uint2*>(b1 + int64_t(g) * 32));
        r.s0 = __ldg(s0 + int64_t(g) * 4);
        r.s1 = __ldg(s1 + int64_t(g) * 4);
      };
      dev::Raw raw[kPf];
#pragma unroll
      for (int i = 0; i < kPf; ++i)
        if (i < nkc) load(raw[i], i);
      auto one = [&](int g, dev::Raw& r, uint32_t(&fr)[4][4]) {
        step(g, r.w0, r.w1, r.s0 | (r.s1 << 8), fr, [&] {
          if (g + kPf < nkc) load(r, g + kPf);
        });
      };
      // Unrolled by kPf (= 4, a multiple of the two fragment sets) so raw[] and the fragment
      // sets are fixed registers; every exit follows a step that retires the other set's wgmmas.
      static_assert(kPf == 4, "unroll");
      for (int g = 0;; g += 4) {
        one(g, raw[0], fr0);
        if (g + 1 >= nkc) break;
        one(g + 1, raw[1], fr1);
        if (g + 2 >= nkc) break;
        one(g + 2, raw[2], fr0);
        if (g + 3 >= nkc) break;
        one(g + 3, raw[3], fr1);
        if (g + 4 >= nkc) break;
      }
    } else {
      static_assert(kSG == 4, "super-granule of 4");
      // nkc is a multiple of 4 (the host aligns splits to super-granules).
      auto load = [&](dev::RawS& r, int g) {
        if (kDiag & 4) {
          r = dev::RawS{make_uint4(0x22222222u * (g & 3), 1u, 2u, 3u), make_uint4(4u, 5u, 6u, 7u),
                        make_uint4(8u, 9u, 10u, 11u), make_uint4(12u, 13u, 14u, 15u), 0x38383838u,
                        0x38383838u};
          return;
        }
        r.a0 = __ldg(reinterpret_cast<const uint4*>(b0 + int64_t(g) * 32));
        r.a1 = __ldg(reinterpret_cast<const uint4*>(b0 + int64_t(g) * 32 + 16));
        r.b0 = __ldg(reinterpret_cast<const uint4*>(b1 + int64_t(g) * 32));
        r.b1 = __ldg(reinterpret_cast<const uint4*>(b1 + int64_t(g) * 32 + 16));
        r.s0 = __ldg(reinterpret_cast<const uint32_t*>(s0 + int64_t(g) * 4));
        r.s1 = __ldg(reinterpret_cast<const uint32_t*>(s1 + int64_t(g) * 4));
      };
      // kBufs super-granules of raw B in registers: the loads run 4 * (kBufs - 1) to
      // 4 * kBufs - 1 granules ahead of their decode.
      static_assert(kBufs == 2 || kBufs == 3, "raw-B buffers");
      dev::RawS rs0, rs1, rs2;
      load(rs0, 0);
      if (4 < nkc) load(rs1, 4);
      if (kBufs == 3 && 8 < nkc) load(rs2, 8);
      // Four granules from one super-granule's registers; the last refills them
      // 4 * kBufs granules ahead.
      auto four = [&](int g, dev::RawS& r) {
        // scale byte i of both rows in one PRMT (row r low); decode_frag ignores the high half
        auto sc = [&](int i) { return __byte_perm(r.s0, r.s1, unsigned(i | ((4 + i) << 4))); };
        step(g, make_uint2(r.a0.x, r.a0.y), make_uint2(r.b0.x, r.b0.y), sc(0), fr0, nothing);
        step(g + 1, make_uint2(r.a0.z, r.a0.w), make_uint2(r.b0.z, r.b0.w), sc(1), fr1, nothing);
        step(g + 2, make_uint2(r.a1.x, r.a1.y), make_uint2(r.b1.x, r.b1.y), sc(2), fr0, nothing);
        const uint32_t sc3 = sc(3);
        step(g + 3, make_uint2(r.a1.z, r.a1.w), make_uint2(r.b1.z, r.b1.w), sc3, fr1, [&] {
          if (g + 4 * kBufs < nkc) load(r, g + 4 * kBufs);
        });
      };
      for (int g = 0;; g += 4 * kBufs) {
        four(g, rs0);
        if (g + 4 >= nkc) break;
        four(g + 4, rs1);
        if (g + 8 >= nkc) break;
        if (kBufs == 3) {
          four(g + 8, rs2);
          if (g + 12 >= nkc) break;
        }
      }
    }
    dev::wgmma_wait<0>();
    dev::fence_acc(acc);
    if (lane == 0) dev::mbar_arrive(empty((q + RA - 1) % RA));

    // ---------------- split-K: partials, last split reduces ----------------
    // accumulator register 4j + 2hh + e holds (B row rloc + 8hh, M col 8j + 2*c4 + e)
    if (p.split > 1) {
      float4* mine = reinterpret_cast<float4*>(
          p.partial + (int64_t(x.tile) * p.split + x.ks) * (int64_t(kRowsN) * MT));
#pragma unroll
      for (int j = 0; j < MT / 8; ++j)
        mine[j * (128 * kW) + tid] = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
      __threadfence();
      dev::named_sync(1, 128 * kW);
      if (tid == 0) {
        asm volatile("griddepcontrol.wait;\n" ::: "memory");  // counters zeroed by the prepass
        const int old = atomicAdd(p.counters + x.tile, 1);
        last_flag = old == p.split - 1;
        __threadfence();
      }
      dev::named_sync(1, 128 * kW);
      const bool last = last_flag != 0;
      dev::named_sync(1, 128 * kW);  // last_flag read by all before the next unit rewrites it
      if (!last) continue;
      __threadfence();
      // Sum in split order. Splits outer, fragments inner: the loads of one split are
      // independent and in flight together (a split-inner loop serialises one L2 round trip
      // per load).
      const float4* all = reinterpret_cast<const float4*>(
          p.partial + int64_t(x.tile) * p.split * (int64_t(kRowsN) * MT));
      constexpr int kJ = 8;  // fragments per pass (registers)
#pragma unroll
      for (int j0f = 0; j0f < MT / 8; j0f += kJ) {
        float4 sum[kJ];
        for (int t = 0; t < p.split; ++t) {
          float4 v[kJ];
          if (t == x.ks) {
#pragma unroll
            for (int j = 0; j < kJ; ++j) {
              const int a4 = 4 * (j0f + j);
              v[j] = make_float4(acc[a4], acc[a4 + 1], acc[a4 + 2], acc[a4 + 3]);
            }
          } else {
            const float4* src = all + int64_t(t) * (kRowsN * MT / 4) + tid;
#pragma unroll
            for (int j = 0; j < kJ; ++j) v[j] = __ldcg(src + (j0f + j) * (128 * kW));
          }
#pragma unroll
          for (int j = 0; j < kJ; ++j) {
            if (t == 0) {
              sum[j] = v[j];
            } else {
              sum[j].x += v[j].x;
              sum[j].y += v[j].y;
              sum[j].z += v[j].z;
              sum[j].w += v[j].w;
            }
          }
        }
#pragma unroll
        for (int j = 0; j < kJ; ++j) {
          const int a4 = 4 * (j0f + j);
          acc[a4] = sum[j].x;
          acc[a4 + 1] = sum[j].y;
          acc[a4 + 2] = sum[j].z;
          acc[a4 + 3] = sum[j].w;
        }
      }
      if (tid == 0) p.counters[x.tile] = 0;  // clean for reuse (the prepass zeroes it anyway)
    }

    // ---------------- epilogue: stage C^T fragments as C rows in shared memory ----------------
    const uint32_t stage = epi + wg * (MT * C::kEpiPitch);
    dev::named_sync(2 + wg, 128);  // the previous unit's copy-out finished reading the stage
#pragma unroll
    for (int j = 0; j < MT / 8; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int mloc = 8 * j + 2 * c4 + e, nloc = 16 * wq + (lane >> 2) + 8 * hh;
          const __half h = __float2half_rn(acc[4 * j + 2 * hh + e] * kAccUnscale);
          asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(stage + mloc * C::kEpiPitch + nloc * 2),
                       "h"(__half_as_ushort(h))
                       : "memory");
        }
    dev::named_sync(2 + wg, 128);
    // 128 threads copy the WG's MT x 64 block out: 8 x 16 bytes per C row.
    const int t128 = tid & 127;
    const int64_t col0 = j0 + 64 * wg;
    const bool vec = (p.n % 8) == 0;
    for (int idx = t128; idx < MT * 8; idx += 128) {
      const int mloc = idx >> 3, ch = idx & 7;
      const int64_t row = i0 + mloc, col = col0 + ch * 8;
      if (row >= p.m || col >= p.n) continue;
      const uint4 v = v2::dev::ld_shared_v4(stage + mloc * C::kEpiPitch + ch * 16);
      __half* cp = p.c + (x.batch * p.m + row) * p.n + col;
      if (vec) {
        *reinterpret_cast<uint4*>(cp) = v;
      } else {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
        for (int e = 0; e < 8 && col + e < p.n; ++e)
          cp[e] = __ushort_as_half(static_cast<unsigned short>(w[e >> 1] >> (16 * (e & 1))));
      }
    }
  }
#else
  (void)p;
#endif
}

template <int MT, int kDiag = 0, int kSG = 4, int kBufs = 2>
void launch_rs(const Params& p, int grid, cudaStream_t stream);
template <int MT>
int resident_ctas();

}  // namespace nvfp4::sm90::v3
