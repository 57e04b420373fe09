// The streaming path's kernel (small M; launcher stream.cu, work split stream_plan.hpp, loop
// pieces stream_loop.cuh). One CTA per SM, 16 warps (12 at M tile 32), one cooperative launch per
// call, in two phases around one grid-wide barrier:
//   1. each CTA decodes the slices of A its units touch into the shared slab (rows past M zero)
//      while each warp's first two B groups load; then each warp walks its units: B from global
//      memory into registers two groups ahead, decode, mma.sync against the slab. At the end of
//      each panel-slice a warp holds a piece: one that no other warp of the CTA shares is stored
//      to its slot in the workspace at once (plain stores: no fence, no atomic, so the loads in
//      flight are never waited for), the (at most two) others wait in shared memory and are
//      summed in warp order after the loop, then stored the same way;
//   2. after the grid's barrier (which makes every piece visible) CTA b sums the pieces of its
//      share of the panels in (slice, slot) order and writes C (x 2^28, the decode's bias).
// No counters: the workspace may hold anything, every slot read was written in the same call,
// and the order of every sum depends on the shape and configuration only.
#pragma once

#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/stamps.hpp"
#include "kernels/sm90/stream_loop.cuh"
#include "kernels/sm90/stream_plan.hpp"

namespace nvfp4::sm90::stream {

// Warps a CTA (config.hpp's stream_warps): 16, or 12 at M tile 32, whose 16 accumulators a lane
// would not fit the 128 registers of 16 warps beside three groups of B in flight.
template <int NT>
constexpr int warps_for() { return NT == 4 ? 12 : 16; }

struct Params {
  const uint8_t* a;    // [L, M, K/2]
  const uint8_t* sfa;  // [L, M, K/16]
  const uint8_t* b;    // [L, N, K/2]
  const uint8_t* sfb;  // [L, N, K/16]
  uint16_t* c;         // [L, M, N] fp16
  float* partial;      // per panel-slice, plan.slots pieces of 16 x MT FP32 (fragment order)
  StreamPlan plan;
  int m, n;
  int slab_slices;     // slices of A the slab holds
  int64_t kbytes, kscales;  // a row's code bytes (K / 2) and scale bytes (K / 16)
  int64_t panels_total;     // L x plan.panels
};

// Thread 0 of the CTA writes %globaltimer to `word` of its record (StreamStampLayout) in the
// kernel built with the time line (kStamps; launched only where DeviceState::stream_stamps is
// set), nothing in the one every timed run launches; `whole`: after a barrier, so that the stamp
// is the CTA's last warp's.
template <bool kStamps>
__device__ __forceinline__ void stamp_put(uint64_t* stamps, int word, uint64_t v) {
  if constexpr (kStamps) {
    if (threadIdx.x == 0) stamps[size_t(blockIdx.x) * StreamStampLayout::kWords + word] = v;
  }
}
template <bool kStamps>
__device__ __forceinline__ void stamp(uint64_t* stamps, int word, bool whole) {
  if constexpr (kStamps) {
    if (whole) __syncthreads();
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    stamp_put<kStamps>(stamps, word, t);
  }
}

template <int NT>
struct Geometry {
  static constexpr int kMT = 8 * NT;                   // A rows held (M tile)
  static constexpr int kBlockSlab = kMT * 128;         // slab bytes of one K block
  static constexpr int kGroupSlab = 4 * kBlockSlab;    // ... of one group
  static constexpr int kPiece = NT * 32;               // float4s of one 16 x MT partial
};

// A piece of panel-slice `ps` computed by this CTA into its slot (`slot`: this CTA's index among
// the CTAs that touch the panel-slice). Whole warp.
template <int NT>
__device__ __forceinline__ void store_piece(const Params& q, const float (&acc)[NT][4], int64_t ps, int slot,
                                            int lane) {
  float4* dst = reinterpret_cast<float4*>(q.partial) + (ps * q.plan.slots + slot) * Geometry<NT>::kPiece;
#pragma unroll
  for (int t = 0; t < NT; ++t) __stcg(dst + t * 32 + lane, make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]));
}

// Phase 2: every piece of `panel` summed in (slice, slot) order, C written. Whole warp. This code
// runs once or twice a warp, cold in the instruction cache, so it is kept short rather than
// pipelined (docs/kernels.md, the streaming path): the walk runs once, rolled, handing piece j of
// the next 32 to lane j; then the pieces load kBatch at a time (indices by shuffle) and are added
// in order. A panel has a few pieces (its slices x the CTAs sharing each), so that is one or two
// L2 round trips. The sum starts at -0, the identity of addition, so its bits are those of a
// plain sum in that order.
template <int NT>
__device__ __forceinline__ void finish_panel(const Params& q, int64_t panel, int lane) {
  constexpr int kBatch = 4;  // pieces loaded at once
  const StreamPlan& p = q.plan;
  const float4* base = reinterpret_cast<const float4*>(q.partial) + lane;
  StreamPieceWalk walk(p, panel);
  float4 sum[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) sum[t] = make_float4(-0.0f, -0.0f, -0.0f, -0.0f);
  for (bool more = true; more;) {
    int64_t mine = 0;  // lane j: piece j of this round
    int count = 0;
#pragma unroll 1
    for (; count < 32; ++count) {
      if (!walk.next()) {
        more = false;
        break;
      }
      if (lane == count) mine = walk.piece();
    }
#pragma unroll 1
    for (int j0 = 0; j0 < count; j0 += kBatch) {
      // a batch past the last piece loads the last again and adds -0 for it: no branches
      float4 r[kBatch][NT];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int64_t piece = __shfl_sync(0xffffffffu, mine, min(j0 + u, count - 1));
#pragma unroll
        for (int t = 0; t < NT; ++t) r[u][t] = __ldcg(base + piece * Geometry<NT>::kPiece + t * 32);
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const bool in = j0 + u < count;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          sum[t].x += in ? r[u][t].x : -0.0f;
          sum[t].y += in ? r[u][t].y : -0.0f;
          sum[t].z += in ? r[u][t].z : -0.0f;
          sum[t].w += in ? r[u][t].w : -0.0f;
        }
      }
    }
  }
  // lane (g, c) holds rows g, g + 8 of the panel (C columns) and A rows 8t + 2c, 8t + 2c + 1
  const int64_t batch = stream_div(panel, p.panels);
  const int64_t n0 = (panel - batch * p.panels) * kStreamPanelRows + (lane >> 2), n1 = n0 + 8;
  const int c = lane & 3;
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const float v[4] = {sum[t].x, sum[t].y, sum[t].z, sum[t].w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = 8 * t + 2 * c + (e & 1);
      const int64_t n = e < 2 ? n0 : n1;
      if (m < q.m && n < q.n)
        q.c[(batch * q.m + m) * q.n + n] = __half_as_ushort(__float2half_rn(v[e] * kAccUnscale));
    }
  }
}

template <int NT, bool kStamps = false, int kWarps = warps_for<NT>()>
__global__ void __launch_bounds__(kWarps * 32, 1) stream_kernel(const Params q, uint64_t* stamps) {
  using G = Geometry<NT>;
  using namespace streamloop;
  extern __shared__ __align__(16) uint8_t smem[];
  const StreamPlan& p = q.plan;
  const int gs = p.slice_groups;
  // shared memory: the warps' boundary pieces and their tags (fixed offsets), then the A slab
  float4* entries = reinterpret_cast<float4*>(smem);
  long long* tags = reinterpret_cast<long long*>(entries + kWarps * 2 * G::kPiece);
  uint8_t* slab = reinterpret_cast<uint8_t*>(tags + kWarps * 2);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int64_t gw = int64_t(blockIdx.x) * kWarps + warp;
  const int64_t u0 = stream_warp_start(p, gw), u1 = stream_warp_start(p, gw + 1);
  const int n = static_cast<int>(u1 - u0);
  const int64_t cta0 = stream_cta_start(p, blockIdx.x), cta1 = stream_cta_start(p, blockIdx.x + 1);

  if (lane == 0) {
    tags[2 * warp] = -1;
    tags[2 * warp + 1] = -1;
  }
  stamp<kStamps>(stamps, StreamStampLayout::kStartNs, false);
  if constexpr (kStamps) {
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    stamp_put<kStamps>(stamps, StreamStampLayout::kSm, sm);
    stamp_put<kStamps>(stamps, StreamStampLayout::kUnits, uint64_t(cta1 - cta0));
  }

  // load cursor: (batch, slice, panel, group in slice) and this lane's code / scale pointers
  const int64_t z0 = u0 / p.per_z;
  const int64_t r0 = u0 - z0 * p.per_z;
  // z = (batch, K slice): kept as the two, so that moving to the next z needs no division (one in
  // the loop cost ~25 instructions, counted in every group's code: docs/kernels.md)
  int ld_bt = static_cast<int>(z0 / p.slices);  // units < 2^31 (config.cpp)
  int ld_sl = static_cast<int>(z0 - int64_t(ld_bt) * p.slices);
  int ld_p = static_cast<int>(r0 / gs), ld_gl = static_cast<int>(r0 - int64_t(ld_p) * gs);
  const uint8_t *cp = nullptr, *sp = nullptr;
  int dc = 0;  // row g + 8's code offset from row g (K < 2^28: config.cpp); its scales' is dc / 8
  auto set_ptrs = [&] {
    const int row0 = min(ld_p * kStreamPanelRows + g, q.n - 1), row1 = min(ld_p * kStreamPanelRows + g + 8, q.n - 1);
    const int64_t row = int64_t(ld_bt) * q.n + row0;
    const int grp = ld_sl * gs + ld_gl;
    cp = q.b + row * q.kbytes + grp * 128 + 16 * c;
    sp = q.sfb + row * q.kscales + grp * 16 + 2 * c;
    dc = (row1 - row0) * static_cast<int>(q.kbytes);
  };
  auto load_next = [&](Buf& b) {
    load_group(b, cp, sp, dc, dc >> 3);
    if (++ld_gl < gs) {
      cp += 128;
      sp += 16;
    } else {
      ld_gl = 0;
      if (++ld_p == p.panels) {
        ld_p = 0;
        if (++ld_sl == p.slices) {
          ld_sl = 0;
          ++ld_bt;
        }
      }
      set_ptrs();
    }
  };
  Buf b0, b1, b2;
  if (n > 0) {
    set_ptrs();
    load_next(b0);
  }
  if (n > 1) load_next(b1);

  // A slab: the slices [z_first, z_first + z_count) this CTA's units touch, a slice at a time, so
  // that a slice's batch and groups are worked out once (uniform) and an entry's place is shifts
  // and masks (an entry: lane column cc of row m in virtual K block j of group gl2). Four entries a
  // thread at a time, their loads first (L2 latency, not issue, is what this costs).
  const int64_t z_first = stream_div(cta0, p.per_z);
  const int z_count = cta1 > cta0 ? static_cast<int>(stream_div(cta1 - 1, p.per_z) - z_first) + 1 : 0;
  {
    constexpr int kBatch = 4;
    constexpr int kRowShift = 2, kBlockShift = kRowShift + (NT == 1 ? 3 : NT == 2 ? 4 : 5);  // log2(4 kMT)
    static_assert((1 << kBlockShift) == 4 * G::kMT, "entries of one K block");
    const int per_slice = gs << (kBlockShift + 2);
    for (int slot = 0; slot < z_count; ++slot) {
      const int64_t zz = z_first + slot;
      const int64_t bt = stream_div(zz, p.slices);
      const int grp0 = static_cast<int>(zz - bt * p.slices) * gs;
      const uint8_t* a_codes = q.a + bt * q.m * q.kbytes + grp0 * 128;
      const uint8_t* a_scales = q.sfa + bt * q.m * q.kscales + grp0 * 16;
      uint8_t* slab_slice = slab + slot * gs * G::kGroupSlab;
      for (int e0 = threadIdx.x; e0 < per_slice; e0 += kBatch * blockDim.x) {
        uint2 w[kBatch];
        uint32_t sc[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int e = e0 + u * static_cast<int>(blockDim.x);
          const int cc = e & 3, m = (e >> kRowShift) & (G::kMT - 1), rest = e >> kBlockShift;  // rest: gl2 * 4 + j
          const int sb = (rest >> 2) * 16 + virtual_block(rest & 3, cc);  // scale block from the slice's start
          w[u] = make_uint2(0, 0);
          sc[u] = 0;
          if (e < per_slice && m < q.m) {
            w[u] = __ldg(reinterpret_cast<const uint2*>(a_codes + m * q.kbytes + sb * 8));
            sc[u] = __ldg(a_scales + m * q.kscales + sb);
          }
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int e = e0 + u * static_cast<int>(blockDim.x);
          if (e >= per_slice) break;
          const int cc = e & 3, m = (e >> kRowShift) & (G::kMT - 1), rest = e >> kBlockShift;
          uint8_t* block = slab_slice + rest * G::kBlockSlab;
          if (m < q.m) {
            slab_entry(block, m, cc, w[u], sc[u]);
          } else {
            slab_zero(block, m, cc);
          }
        }
      }
    }
  }
  __syncthreads();  // the slab written
  stamp<kStamps>(stamps, StreamStampLayout::kSlabNs, false);

  // compute cursor
  int c_p = static_cast<int>(r0 / gs), c_gl = static_cast<int>(r0 - int64_t(r0 / gs) * gs);
  int c_ps = static_cast<int>(u0 / gs);  // panel-slice: units are (z, panel, group) ordered
  uint32_t slab_z = static_cast<uint32_t>(z0 - z_first) * gs * G::kGroupSlab;
  const int off0 = g * 128 + c * 32 + (g & 1) * 16;  // k-steps 0-1 of row g (tile 0); 2-3 at off0 + d1
  const int d1 = (g & 1) ? -16 : 16;
  float acc[NT][4];
#pragma unroll
  for (int t = 0; t < NT; ++t)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[t][i] = 0.0f;
  bool first_piece = true;
  // Whether the CTA's part of a piece's panel-slice is this warp's piece alone: always for the
  // pieces between the first and the last (they cover their panel-slice), for the first where
  // the warp starts a panel-slice or the CTA, for the last where it ends one or the CTA.
  const bool start_alone = u0 % gs == 0 || u0 == cta0, end_alone = u1 % gs == 0 || u1 == cta1;
  // The slot of an alone piece: 0 (this CTA holds the panel-slice's first unit) except for a first
  // piece whose panel-slice begins in an earlier CTA (computed once: no 64-bit division in the loop).
  const int first_slot = static_cast<int>(blockIdx.x - stream_owner(u0 / gs * gs, p.units, p.ctas));

  auto consume = [&](const Buf& b, int i) {
    const uint8_t* a0 = slab + slab_z + c_gl * G::kGroupSlab + off0;
    const uint8_t* a1 = a0 + d1;
    const GroupScales sc = group_scales(b);
    mma_block<0, NT>(b, sc, a0, a1, acc);
    mma_block<1, NT>(b, sc, a0 + G::kBlockSlab, a1 + G::kBlockSlab, acc);
    mma_block<2, NT>(b, sc, a0 + 2 * G::kBlockSlab, a1 + 2 * G::kBlockSlab, acc);
    mma_block<3, NT>(b, sc, a0 + 3 * G::kBlockSlab, a1 + 3 * G::kBlockSlab, acc);
    if (c_gl == gs - 1 || i + 1 == n) {  // the piece of panel-slice c_ps ends
      if ((!first_piece || start_alone) && (i + 1 < n || end_alone)) {
        store_piece<NT>(q, acc, c_ps, first_piece ? first_slot : 0, lane);
      } else {
        const int e = 2 * warp + (first_piece ? 0 : 1);
#pragma unroll
        for (int t = 0; t < NT; ++t)
          entries[e * G::kPiece + t * 32 + lane] = make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]);
        if (lane == 0) tags[e] = c_ps;
      }
#pragma unroll
      for (int t = 0; t < NT; ++t)
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[t][k] = 0.0f;
      first_piece = false;
    }
    if (++c_gl == gs) {
      c_gl = 0;
      ++c_ps;
      if (++c_p == p.panels) {
        c_p = 0;
        slab_z += gs * G::kGroupSlab;
      }
    }
  };

  // three register buffers, two groups in flight while the third is consumed
  for (int i = 0; i < n;) {
    if (i + 2 < n) load_next(b2);
    consume(b0, i);
    if (++i == n) break;
    if (i + 2 < n) load_next(b0);
    consume(b1, i);
    if (++i == n) break;
    if (i + 2 < n) load_next(b1);
    consume(b2, i);
    ++i;
  }

  // the pieces the CTA's warps share: summed in warp order by the warp holding the first
  __syncthreads();
  stamp<kStamps>(stamps, StreamStampLayout::kLoopNs, false);
#pragma unroll 1
  for (int sl = 0; sl < 2; ++sl) {
    const int e = 2 * warp + sl;
    const long long tag = tags[e];
    if (tag < 0) continue;
    int prev = e - 1;
    while (prev >= 0 && tags[prev] < 0) --prev;
    if (prev >= 0 && tags[prev] == tag) continue;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      const float4 v = entries[e * G::kPiece + t * 32 + lane];
      acc[t][0] = v.x;
      acc[t][1] = v.y;
      acc[t][2] = v.z;
      acc[t][3] = v.w;
    }
    for (int f = e + 1; f < 2 * kWarps; ++f) {
      const long long tf = tags[f];
      if (tf < 0) continue;
      if (tf != tag) break;
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        const float4 v = entries[f * G::kPiece + t * 32 + lane];
        acc[t][0] += v.x;
        acc[t][1] += v.y;
        acc[t][2] += v.z;
        acc[t][3] += v.w;
      }
    }
    store_piece<NT>(q, acc, tag, static_cast<int>(blockIdx.x - stream_owner(tag * gs, p.units, p.ctas)), lane);
  }

  // phase 2: every piece stored and visible; CTA b's share of the panels, one warp a panel
  stamp<kStamps>(stamps, StreamStampLayout::kArriveNs, true);
  cooperative_groups::this_grid().sync();
  stamp<kStamps>(stamps, StreamStampLayout::kPassNs, false);
  const int64_t f0 = stream_div(int64_t(blockIdx.x) * q.panels_total, gridDim.x);
  const int64_t f1 = stream_div(int64_t(blockIdx.x + 1) * q.panels_total, gridDim.x);
  for (int64_t panel = f0 + warp; panel < f1; panel += kWarps) finish_panel<NT>(q, panel, lane);
  stamp<kStamps>(stamps, StreamStampLayout::kEndNs, true);
}

}  // namespace nvfp4::sm90::stream
