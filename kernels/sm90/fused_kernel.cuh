// The sm90 fused path's kernel (sm_90a only): the warp-specialised structure of the fp16
// mainloop (mainloop_kernel.cuh) with B kept in FP4 until it reaches the registers of the MMA
// warps. Its launcher, with the A prepass, is fused.cu.
//
// C^T = B A^T: the wgmma "A" operand (64 rows x k16, RS form: registers) is a 64-row slice of B,
// the wgmma "B" operand (N = MT, the M tile) is A, decoded once per problem to fp16 by the
// prepass (decode_a_kernel in prepass.cuh, decode_frag's K order: its 128-row tiles are
// 128-byte swizzled, as the SW128 descriptor wants them).
//
// CTA: 384 threads = 3 warpgroups, one CTA per SM (or two at M tile 16: Cfg's OCC), persistent over work units (batch, M tile,
// 128-row N tile, K split), the grouped raster of walk.hpp with bands of 8 M tiles - or, with
// stream-K (stream_k.hpp), one CTA per worker over its equal share of all tiles' K, cut at tile
// boundaries into pieces reduced like K splits (UnitWalk, walk.hpp). Two rings
// in shared memory, each with full/empty mbarriers:
//   * the A ring, two 64-wide K blocks per stage: warp 0 lane 0 bulk-copies each block's fp16 A
//     slab (MT x 128 bytes) after waiting for the prepass (griddepcontrol.wait). 12, 6 or 4
//     blocks in all, a divisor of the consumers' unroll, and every unit starts at stage 0 (the
//     rest of a unit's last round is completed empty by both sides), so a consumer's A stage,
//     barrier addresses and descriptor are constants of the K block's place in its unrolled loop;
//   * the B ring, kFusedBStageKb = 4 K blocks per stage: warp 1 lane 0 loads the tile's raw packed
//     B (128 rows x 128 bytes) as one TMA box, 128-byte swizzled, and the rows' scale bytes as a
//     second, unswizzled box of 128 x 32 bytes: the two K quads from the one holding the stage's
//     first block, since TMA takes 16-byte aligned starts only and a split may start inside a
//     quad. Both complete on the stage's full mbarrier (one expect_tx arrive). Where the scales
//     cannot be a tensor map (K % 256 != 0, or sfb not 16-byte aligned) the warp copies them with
//     plain loads and stores instead and each lane arrives too (slow). The consumers read B
//     with ordinary loads, so a refill waits for the empty barrier and then a proxy fence before
//     its TMA. B does not depend on the prepass: warp 1 never waits for it.
//     Rows of 128 bytes instead of one K block's 32 (and 16 scale bytes instead of 4) are what
//     the change from one ring of K blocks was for: B's many small row pieces were the cost, not
//     the producer's instructions (docs/kernels.md, the fused path, why two rings);
//   warpgroup 0 runs setmaxnreg 56 (40 spilled the plain scale copy), warps 2 and 3 have nothing
//   to do;
//   * warpgroups 1, 2 are consumers (setmaxnreg 224), each owning 64 B rows (C columns). Per K
//     block: wait for its A stage (at the stage's first block), issue wgmma k with fragment set X,
//     read the raw B of k+1 from its B stage and decode it exactly (decode.hpp decode_frag: E2M1 x
//     E4M3 is exact in fp16) into set Y while wgmma k runs, then wait_group 1 retires wgmma k-1
//     (its A stage goes back to the producer once its last block has retired). A B stage goes
//     back once its last K block is decoded. Three register
//     sets and four K blocks per B stage: the loop is unrolled by twelve so that the set and the
//     K block within the B stage (its swizzled address) are fixed;
//   * split-K and stream-K: reduce_split_k (schedule.cuh): every split (piece) stores its FP32
//     partial (fragment order, coalesced), the last of a tile to arrive sums all partials in
//     split order 0..S-1 (bit-reproducible);
//   * epilogue: the C^T accumulators are written transposed (stmatrix .trans) into 128-byte
//     swizzled [rows x 64] boxes and stored by TMA (rows/columns past M/N clipped by the tensor
//     map), two boxes per warpgroup in flight; N % 8 != 0 falls back to masked stores.
// PDL: only warp 0 (A) waits for the A prepass; the split-K counters, zeroed by the prepass, are
// touched only after the same wait.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/descriptors.hpp"
#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/schedule.cuh"
#include "kernels/sm90/stamps.cuh"
#include "kernels/sm90/wgmma.hpp"

namespace nvfp4::sm90::fused {

struct Params {
  const uint8_t* sfb;  // B scales, linear [L, N, K/16]
  const uint8_t* a16;  // prepass tiles [L][tiles128][nk][128 rows][128 B swizzled]
  __half* c;
  float* partial;      // split > 1: [tiles][split][128 * MT] FP32, fragment order
  int* counters;       // split > 1: [tiles], zeroed by the prepass, reset by each tile's last split
  int m, n, l;
  int nk;              // K / 64
  int kblocks;         // K / 16: scale row pitch
  int tiles128;        // 128-row prepass tiles per batch
  int tiles_m;         // MT-row M tiles per batch
  int tiles_n;         // 128-row N tiles per batch
  int split;           // split-K: K splits per tile (1 with stream-K)
  int units;           // split-K: l * tiles_m * tiles_n * split
  int slots;           // FP32 partial slots per tile (the split, or stream-K's most pieces)
  int workers;         // > 0: stream-K over this many CTAs (the grid; stream_k.hpp)
  int nq;              // K quads (kFusedBStageKb K blocks) per tile
  int64_t wq;          // stream-K: quads of all tiles, l * tiles_m * tiles_n * nq
  int tma_store;       // 1: C through shared memory and TMA stores (N % 8 == 0, C 16-byte aligned)
  int scale_tma;       // 1: scales by TMA (tmS); 0: sfb or K / 16 not 16-byte aligned, plain loads
  TimeLine stamps;     // the time line (stamps.cuh; DeviceState::fused_stamps): off where null
};

// kFusedRowsN (B rows per tile, 64 per consumer warpgroup), kFusedGroup, kFusedATile,
// kFusedBStageKb: config.hpp
constexpr int kThreads = 384;

// OCC CTAs per SM: 1, or 2 at M tile 16 (FusedConfig::per_sm: twice the consumer warps per SM,
// half the shared memory and registers each).
template <int MT, int OCC = 1>
struct Cfg {
  static_assert(MT == 16 || MT == 32 || MT == 64 || MT == 128 || MT == 256, "M tile");
  static_assert(OCC == 1 || (OCC == 2 && MT == 16), "two CTAs per SM at M tile 16 only (config.hpp)");
  static constexpr int kSmemLimit = OCC == 1 ? 227 * 1024 : 113 * 1024;  // 228 KB an SM, 1 KB a CTA reserved
  static constexpr int kABytes = MT * 128;                        // MT rows x 64 fp16, swizzled
  static constexpr int kBRow = kFusedBStageKb * 32;                // raw B bytes per row per B stage
  static_assert(kBRow == 128, "one 128-byte swizzle span per row");
  static constexpr int kBBytes = kFusedRowsN * kBRow;              // [128 rows][128 B], swizzled
  // Scales per B stage: [128 rows][kFusedScaleRow = 32 bytes] (config.hpp: fused_scale_box_start).
  static constexpr int kSRow = kFusedScaleRow;
  static constexpr int kSBytes = kFusedRowsN * kSRow;
  static constexpr int kBoxRows = MT < 64 ? MT : 64;  // epilogue box: kBoxRows x 64 fp16
  static constexpr int kEpiBox = kBoxRows * 128;
  static constexpr int kEpiBytes = 2 * 2 * kEpiBox;   // two boxes per consumer warpgroup
  // B stages (4 K blocks each) first, then as many A blocks as fit (see kABlocks): the B ring
  // keeps 12-32 K blocks of raw B in flight, the A ring (from L2) at least 4.
  static constexpr int kBStages = OCC == 2 ? 4 : MT <= 32 ? 8 : MT == 64 ? 6 : MT == 128 ? 4 : 3;
  static constexpr int kBarBytes = 512;  // (2 x 16 + 2 x 8) mbarriers
  static constexpr int kFixed = 1024 + kEpiBytes + kBarBytes + kBStages * (kBBytes + kSBytes);
  static constexpr int kAFit = (kSmemLimit - kFixed) / kABytes;
  // A ring slots (K blocks): a divisor of the consumer loop's unroll (12), so that every K block's
  // A stage, its phase flip and its descriptor are compile-time: 12, 6 or 4 (each unit starts at
  // stage 0, see the A producer's padding). A stage holds kAStageKb = 2 K blocks - one wait and one
  // release per two blocks in the consumers' chain - except at M tile 256, whose 4 blocks would
  // make 2 stages (measured 2-4 % slower there: docs/kernels.md, the consumer chain).
  static constexpr int kABlocks = kAFit >= 12 ? 12 : kAFit >= 6 ? 6 : 4;
  static constexpr int kAStageKb = MT == 256 ? 1 : 2;
  static constexpr int kAStages = kABlocks / kAStageKb;
  // Three fragment register sets: K block i+1 is decoded into set (i+1) % 3 while the wgmmas of
  // blocks i-1 and i run; then wait_group 1 retires block i-1. (Deeper waits with more sets made
  // ptxas serialise the wgmmas, C7513.)
  static constexpr int kSets = 3;
  // The leaner consumer loop (whole passes without a test per block, the next block decoded
  // without a branch; see the loop) where registers allow and it was measured faster: at M tile
  // 256 (128 accumulators) the fenced decode makes ptxas serialise the wgmmas (C7511/C7512) and
  // whole passes alone let it move the decode in among them; at two CTAs per SM (96 registers)
  // whole passes alone spill; at M tile 64 it was 2-5 % slower (docs/kernels.md).
  static constexpr bool kLeanLoop = (MT == 128 || MT <= 32) && OCC == 1;
  static constexpr size_t kSmem = size_t(kFixed) + size_t(kABlocks) * kABytes;
  // setmaxnreg: warpgroup 0 and the two consumer warpgroups share the 168 x 384 registers of the
  // launch; the 256 tile's accumulators need 224 (216 spilled), the producers 56 (40 spilled the
  // scale copies, 48 the stream-K walk).
  // Two CTAs per SM: 80 at entry (65536 / 768 threads), producers 40, consumers 96 (no spills at
  // M tile 16; at 32 the consumers spill, at 24 the producers).
  static constexpr int kConsumerRegs = OCC == 1 ? 224 : 96;
  static constexpr int kProducerRegs = OCC == 1 ? 56 : 40;
  static constexpr int kLaunchRegs = OCC == 1 ? 168 : 80;
  static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= kLaunchRegs * kThreads, "register file");
  static_assert(kAFit >= 4 && 12 % kABlocks == 0 && kABlocks % kAStageKb == 0 && kBStages >= 2 &&
                    kSmem <= size_t(kSmemLimit),
                "shared memory");
  static_assert(2 * (kAStages + kBStages) * 8 <= kBarBytes, "barrier space");
};

template <int MT, int OCC>
__global__ void __launch_bounds__(kThreads, OCC)
    fused_kernel(const __grid_constant__ CUtensorMap tmC, const __grid_constant__ CUtensorMap tmB,
                 const __grid_constant__ CUtensorMap tmS, const Params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<MT, OCC>;
  constexpr int SA = C::kAStages, SB = C::kBStages, AK = C::kAStageKb;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // swizzled tiles need 1024-byte alignment
  const uint32_t sA = base;                       // SA x AK x kABytes
  const uint32_t sB = sA + SA * AK * C::kABytes;  // SB x raw B (1024-multiple offsets)
  const uint32_t sE = sB + SB * C::kBBytes;       // epilogue boxes
  const uint32_t sS = sE + C::kEpiBytes;          // SB x scales
  const uint32_t fullA = sS + SB * C::kSBytes;    // SA mbarriers each
  const uint32_t emptyA = fullA + SA * 8;
  const uint32_t fullB = emptyA + SA * 8;         // SB mbarriers each
  const uint32_t emptyB = fullB + SB * 8;

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < SA; ++s) {
      ptx::mbar_init(fullA + s * 8, 1);      // the A copy's expect_tx arrive
      ptx::mbar_init(emptyA + s * 8, 256);   // every consumer thread arrives, as on emptyB (see release_b)
    }
    for (int s = 0; s < SB; ++s) {
      ptx::mbar_init(fullB + s * 8, p.scale_tma ? 1 : 1 + 32);  // expect_tx (+ each lane's plain copy)
      ptx::mbar_init(emptyB + s * 8, 256);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  // The entry stamp comes before the barrier, so the A producer's stamp after it is never
  // earlier (a CTA that starts after the prepass is done sees A at once).
  if (threadIdx.x == 128) p.stamps.cta_start();
  __syncthreads();

  if (wg == 0) {
    // ---------------- producer warps ----------------
    ptx::setmaxnreg_dec<C::kProducerRegs>();
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    if (warp == 0 && lane == 0) {
      // A ring: AK K blocks per stage (fewer in a unit's last), from the prepass's tiles.
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      p.stamps.a_ready();
      int stage = 0, q = 0;
      uint32_t phase = 0;
      UnitWalk walk(p, blockIdx.x);
      for (WorkUnit x; walk.next(p, x, blockIdx.x, gridDim.x);) {
        // The unit's first K block of its first prepass tile (MT >= 128: MT / 128 tiles, nk
        // blocks apart; below 128 a row slice of one tile), then one tile block per K block.
        const int64_t tile0 = MT >= 128 ? int64_t(x.batch) * p.tiles128 + x.tm * (MT / 128)
                                        : int64_t(x.batch) * p.tiles128 + (x.tm * MT) / 128;
        const uint8_t* src = p.a16 + (tile0 * p.nk + x.kb0) * int64_t(kFusedATile) +
                             (MT >= 128 ? 0 : ((x.tm * MT) % 128) * 128);
        for (int kb = x.kb0; kb < x.kb1; kb += AK) {
          if (q >= SA) ptx::mbar_wait(emptyA + stage * 8, phase ^ 1u);
          const int nb = min(AK, x.kb1 - kb);
          const uint32_t fb = fullA + stage * 8;
          ptx::mbar_arrive_expect_tx(fb, nb * C::kABytes);
          for (int b = 0; b < nb; ++b, src += kFusedATile) {
            const uint32_t dst = sA + (stage * AK + b) * C::kABytes;
            if constexpr (MT >= 128) {
#pragma unroll
              for (int h = 0; h < MT / 128; ++h)
                ptx::bulk_copy(dst + h * kFusedATile, src + int64_t(h) * p.nk * kFusedATile, kFusedATile, fb);
            } else {
              ptx::bulk_copy(dst, src, C::kABytes, fb);
            }
          }
          ++q;
          if (++stage == SA) {
            stage = 0;
            phase ^= 1u;
          }
        }
        // The rest of the ring's round is filled with nothing (an arrive without bytes), so the
        // next unit starts at stage 0: the consumers' stage of each K block is then its place in
        // their unrolled loop, a constant (their padding below waits and releases the same stages).
        while (stage != 0) {
          if (q >= SA) ptx::mbar_wait(emptyA + stage * 8, phase ^ 1u);
          ptx::mbar_arrive(fullA + stage * 8);
          ++q;
          if (++stage == SA) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    } else if (warp == 1) {
      // B ring: kFusedBStageKb K blocks of the tile's raw B (one TMA box) and scales per stage;
      // a unit's last stage may hold fewer (its box reads K blocks no consumer uses, past K zero).
      if (lane == 0) {
        ptx::prefetch_tmap(&tmB);
        if (p.scale_tma) ptx::prefetch_tmap(&tmS);
      }
      int stage = 0, q = 0;
      uint32_t phase = 0;
      UnitWalk walk(p, blockIdx.x);
      for (WorkUnit x; walk.next(p, x, blockIdx.x, gridDim.x);) {
        const int n0 = x.tn * kFusedRowsN;
        for (int kb = x.kb0; kb < x.kb1; kb += kFusedBStageKb) {
          if (q >= SB) {
            ptx::mbar_wait(emptyB + stage * 8, phase ^ 1u);
            // The consumers read the stage with ordinary loads (generic proxy), the TMA below
            // writes it through the async proxy: the empty barrier alone does not order the two.
            // Without this fence the box's first rows were now and then overwritten before the
            // last reads of the previous fill: wrong B rows in a few calls of many short split-K
            // units (docs/kernels.md, history, raw-B proxy fence).
            ptx::fence_proxy_async_smem();
          }
          const uint32_t fb = fullB + stage * 8, ss = sS + stage * C::kSBytes;
          if (lane == 0) {
            ptx::mbar_arrive_expect_tx(fb, C::kBBytes + (p.scale_tma ? C::kSBytes : 0));
            ptx::tma_load_3d(sB + stage * C::kBBytes, &tmB, fb, kb * 32, n0, x.batch);
            // Scales: box [128 rows][32 bytes] from the quad holding kb, the stage's layout. Rows
            // past N and bytes past K / 16 read zero; bytes outside the unit's K blocks are read
            // by no consumer.
            if (p.scale_tma) ptx::tma_load_3d(ss, &tmS, fb, fused_scale_box_start(kb), n0, x.batch);
          }
          if (!p.scale_tma) {
            // Rolled (the producer has 56 registers: 8 loads in flight spill), plain loads and
            // shared stores of the unit's K blocks in the stage, then an ordinary arrive
            // (release). Slow: 16 dependent loads a lane.
            const int nb = min(kFusedBStageKb, x.kb1 - kb);
            const uint32_t ds = ss + lane * C::kSRow;
#pragma unroll 1
            for (int j = 0; j < kFusedRowsN / 32; ++j) {
              // row 32j + lane of the tile; past N: a copy nobody reads
              const uint32_t* sp = reinterpret_cast<const uint32_t*>(
                  p.sfb + (int64_t(x.batch) * p.n + min(n0 + 32 * j + lane, p.n - 1)) * p.kblocks + kb * 4);
#pragma unroll 1
              for (int b = 0; b < nb; ++b) ptx::st_shared_u32(ds + j * 32 * C::kSRow + 4 * b, __ldcg(sp + b));
            }
            ptx::mbar_arrive(fb);
          }
          ++q;
          if (++stage == SB) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // ---------------- consumer warpgroups ----------------
    ptx::setmaxnreg_inc<C::kConsumerRegs>();
    const int cw = wg - 1;             // which 64 B rows of the tile
    const int ct = threadIdx.x - 128;  // 0..255 across both consumers
    const int tid = threadIdx.x & 127;
    const int wq = tid >> 5, lane = tid & 31, c4 = lane & 3;
    const int rloc = 64 * cw + 16 * wq + (lane >> 2);  // B rows rloc, rloc + 8 of the tile
    // Raw B of K block j of a stage, row r, scale block c4: bytes 32j + 8c4 of the row, i.e.
    // 16-byte chunk 2j + c4/2 at position (2j + c4/2) ^ (r % 8) (128-byte swizzle); rows r and
    // r + 8 share r % 8. For even 2j: (2j + h) ^ r7 = (2j ^ (r7 & 6)) + (h ^ (r7 & 1)).
    const int r7 = rloc & 7;
    const uint32_t bofs = rloc * C::kBRow + ((((c4 >> 1) ^ r7) & 1) << 4) + (c4 & 1) * 8;
    const int r6 = r7 & 6;
    // Block J of a B stage (J = i % 4): its raw bytes at bq[J] + stage * kBBytes, its scale bytes
    // at sbase + stage * kSBytes + 4J (sbase set per unit: the unit's offset into its first quad
    // where the scales come by TMA, see the B producer).
    uint32_t bq[kFusedBStageKb];
#pragma unroll
    for (int j = 0; j < kFusedBStageKb; ++j) bq[j] = sB + bofs + (((2 * j) ^ r6) << 4);
    uint32_t sbase = 0;
    constexpr int NF = C::kSets;
    static_assert(NF == 3 && kFusedBStageKb == 4, "the loop below is unrolled for 3 sets x 4 K blocks");
    // The chain per K block is what the loop costs (issue 48, docs/kernels.md "the consumer
    // chain"): every unit starts at A stage 0 and the ring's depth divides the loop's unroll, so a
    // block's A stage, barriers and descriptor are constants of its place in the loop (the
    // descriptor's low word plus an immediate: no field masking, the ring lies below 256 KB); a B
    // stage is waited for and released in the stage's first and last block only (a unit's partial
    // last stage after the loop).
    const uint64_t adesc0 = make_kmajor_sw128_desc(sA).pack();
    const uint32_t adesc_lo = static_cast<uint32_t>(adesc0), adesc_hi = static_cast<uint32_t>(adesc0 >> 32);
    int bstage = 0;  // B stage being decoded
    uint32_t aunit = 0, bphase = 0;  // aunit: the phase of A stage 0 at the unit's start
    uint32_t ebox = 0;
    float acc[MT / 2];
    uint32_t fr[NF][4][4];

    // Every consumer thread releases a stage itself: its arrive (release semantics) orders its
    // own shared-memory reads of the stage before the producer's refill. One arrive per warp on
    // behalf of all lanes left the other lanes' reads unordered (racecheck: WAR hazards at every
    // stage reuse; docs/kernels.md, history).
    auto release_b = [&] {
      ptx::mbar_arrive(emptyB + bstage * 8);
      if (++bstage == SB) {
        bstage = 0;
        bphase ^= 1u;
      }
    };
    // Decodes this thread's fragments of K block i (J = i % 4, its place in the B stage; rows
    // rloc / rloc + 8, scale block c4: decode_frag's K order, the prepass's too), waiting for the
    // B stage at its first block and releasing it after its fourth.
    // `used`: the block is in the unit. With kLeanLoop a block past the unit's end inside a stage
    // already waited for (J > 0) is decoded anyway, into a set no wgmma reads - a branch around it
    // cost more instructions per block than its decode - but does not release the stage.
    auto decode = [&](auto jc, uint32_t(&fr)[4][4], bool used) {
      constexpr int J = decltype(jc)::value;
      if constexpr (J == 0) ptx::mbar_wait(fullB + bstage * 8, bphase);
      const uint32_t b = bq[J] + bstage * C::kBBytes;
      const uint2 w0 = ptx::ld_shared_v2(b), w1 = ptx::ld_shared_v2(b + 8 * C::kBRow);
      const uint32_t s = sbase + bstage * C::kSBytes + 4 * J;
      const uint32_t sc = ptx::ld_shared_u8(s) | (ptx::ld_shared_u8(s + 8 * C::kSRow) << 8);
      decode_frag(w0, w1, sc, fr);
      if constexpr (J == kFusedBStageKb - 1)
        if (used) release_b();
    };

    // The time line: thread ct 0 records unit `rec` (stamps.cuh); the others hold INT32_MAX, past
    // any room, and record nothing.
    int rec = ct == 0 ? -1 : INT32_MAX;
    UnitWalk walk(p, blockIdx.x);
    for (WorkUnit x; walk.next(p, x, blockIdx.x, gridDim.x);) {
      if (ct == 0) ++rec;
      const int nkb = x.kb1 - x.kb0;
      p.stamps.unit_begin(rec, x);
      sbase = sS + rloc * C::kSRow + c4 + (p.scale_tma ? fused_scale_in_box(x.kb0) : 0);
#pragma unroll
      for (int i = 0; i < MT / 2; ++i) acc[i] = 0.0f;
      decode(std::integral_constant<int, 0>{}, fr[0], true);
      p.stamps.unit_first_block(rec);
      // K block i (JJ = i % 12): wait for its A stage, issue its wgmmas (set i % 3), decode block
      // i+1 into the next set (last read by block i-2, retired one step ago) while blocks i-1 and
      // i run, then wait_group 1 retires block i-1 and its A stage goes back to the producer.
      // `more`: the unit has a block after this one; `held`: a block before it (in this unit).
      // aph: the phase of A stage 0 in this pass of the loop. An A stage is waited for at its
      // first block and released once its last block has retired (at the next stage's first
      // block, or after the loop).
      uint32_t aph = aunit;
      auto step = [&](auto jj, bool more, bool held, uint32_t(&f)[4][4], uint32_t(&fn)[4][4]) {
        constexpr int JJ = decltype(jj)::value;
        constexpr int AB = JJ % (SA * AK);            // its A slot
        constexpr int AS = JJ / AK % SA;              // its A stage
        constexpr uint32_t AP = (JJ / AK / SA) & 1;   // its phase relative to stage 0's in this pass
        constexpr int AH = (JJ + 11) % 12 / AK % SA;  // the block before's stage (SA x AK divides 12)
        constexpr bool kFirst = JJ % AK == 0;         // the first block of its stage
        if constexpr (kFirst) ptx::mbar_wait(fullA + AS * 8, aph ^ AP);
        ptx::fence_regs(f);
        ptx::wgmma_fence();
#pragma unroll
        for (int s = 0; s < 4; ++s)  // k16 steps
          Wgmma<MT>::mma(acc, f[s],
                         ptx::pack_u64(adesc_lo + uint32_t(AB * (C::kABytes >> 4) + wgmma_desc_advance(32 * s)),
                                       adesc_hi));
        ptx::wgmma_commit();
        // With kLeanLoop, a scheduling fence (a NOP in the SASS): without it ptxas moves the next
        // block's decode in between this block's wgmmas, which are then issued late (measured
        // slower at M tile 64); the branch around the decode keeps them together otherwise.
        if constexpr (C::kLeanLoop) __syncwarp();
        constexpr int JN = (JJ + 1) % 4;  // the next block's place in its B stage
        if constexpr (JN == 0 || !C::kLeanLoop) {
          if (more) decode(std::integral_constant<int, JN>{}, fn, true);  // JN == 0: a new stage's wait
        } else {
          decode(std::integral_constant<int, JN>{}, fn, more);
        }
        ptx::wgmma_wait<1>();
        if constexpr (kFirst)
          if (held) ptx::mbar_arrive(emptyA + AH * 8);
      };
      // left = the blocks after block i. Whole passes (a block after all twelve) run without a
      // test per block; the last pass tests each block against `left` (one compare with a
      // constant) and ends the unit's loop (without kLeanLoop: one loop, every pass tested).
#define NVFP4_FUSED_STEP(JJ, MORE)                                                                 \
  step(std::integral_constant<int, (JJ)>{}, MORE, (JJ) > 0 || i > 0, fr[(JJ) % 3], fr[((JJ) + 1) % 3]);
#define NVFP4_FUSED_PASS(S)                                                                         \
  S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11)
#define NVFP4_FUSED_WHOLE(JJ) NVFP4_FUSED_STEP(JJ, true)
#define NVFP4_FUSED_LAST(JJ)              \
  NVFP4_FUSED_STEP(JJ, (JJ) < left)       \
  if ((JJ) >= left) break;
      int i = 0, left = nkb - 1;
      if constexpr (C::kLeanLoop) {
        for (; left >= 12; i += 12, left -= 12, aph ^= (12 / AK / SA) & 1) {
          NVFP4_FUSED_PASS(NVFP4_FUSED_WHOLE)
        }
      }
      for (;; i += 12, left -= 12, aph ^= (12 / AK / SA) & 1) {
        NVFP4_FUSED_PASS(NVFP4_FUSED_LAST)
      }
#undef NVFP4_FUSED_LAST
#undef NVFP4_FUSED_WHOLE
#undef NVFP4_FUSED_PASS
#undef NVFP4_FUSED_STEP
      ptx::wgmma_wait<0>();
      ptx::fence_regs(acc);
      {
        // The last block's stage goes back, then the rest of the round, which the A producer
        // filled with nothing: wait for it (a parity wait must see every phase) and release it.
        const int nst = (nkb + AK - 1) / AK;  // the unit's A stages
        const int last = (nst - 1) % SA;
        const uint32_t ph = aunit ^ (((nst - 1) / SA) & 1);
        ptx::mbar_arrive(emptyA + last * 8);
        for (int s = last + 1; s < SA; ++s) {
          ptx::mbar_wait(fullA + s * 8, ph);
          ptx::mbar_arrive(emptyA + s * 8);
        }
        aunit ^= ((nst + SA - 1) / SA) & 1;
      }
      if (nkb % kFusedBStageKb != 0) release_b();  // the unit's partial last B stage
      p.stamps.unit_loop_done(rec);

      // ---- split-K: the last split of the tile sums all partials in split order ----
      if (x.splits > 1) {
        float* ws_tile = p.partial + static_cast<size_t>(x.order) * p.slots * (kFusedRowsN * MT);
        auto a = [&](int i) -> float& { return acc[i]; };
        if (!reduce_split_k<MT / 2, true, SplitKBroadcast::BarrierOr>(a, ws_tile, x.split, x.splits,
                                                                    p.counters + x.order, nullptr, ct)) {
          p.stamps.unit_handed_over(rec, x);
          continue;  // counters zeroed by the prepass: touched after griddepcontrol.wait
        }
      }
      p.stamps.unit_reduced(rec, x);

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
        p.stamps.unit_end(rec);
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
      p.stamps.unit_end(rec);
    }
    if (ct == 0) p.stamps.cta_end(rec + 1);
    if (tid == 0) ptx::bulk_wait<0>();  // staged C stores complete before the CTA's smem goes away
  }
#else
  (void)tmC;
  (void)p;
#endif
}

}  // namespace nvfp4::sm90::fused
