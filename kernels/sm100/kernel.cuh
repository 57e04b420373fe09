// The sm100 kernel's device code: the warp roles and the body of one CTA. Included by
// kernels/sm100/sm100.cu (compiled for sm_100f) and, verbatim, by the host execution
// (kernels/sm100/host_model, NVFP4_SM100_HOST_MODEL), which runs it against host models of
// the hardware (docs/kernels.md, "The Blackwell kernel (`sm100`)").
//
// Pipeline per CTA (192 threads, persistent over a static list of work units):
//   warp 0, one thread   TMA producer: per K tile of 256, loads A and B boxes (128 rows x 128
//                        bytes, 128B swizzle) and the 2 KiB of blocked scales of each into a
//                        ring of kStages shared-memory stages (mbarrier full/empty pairs).
//   warp 1, one thread   MMA issuer: copies the stage's scale atoms to tensor memory
//                        (tcgen05.cp 32x128b.warpx4), issues 4 tcgen05.mma kind::mxf4nvf4
//                        block16 (K = 64 each) into a TMEM accumulator, and commits to free
//                        the stage; two accumulators alternate between work units.
//   warps 2-5            epilogue: tcgen05.ld the accumulator (each warp its 32-lane quarter),
//                        convert to fp16 and store; for split-K, store FP32 partials and let the
//                        last CTA of a tile sum them in split order (deterministic).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/sm100/descriptors.hpp"
#include "kernels/sm100/plant.hpp"
#include "kernels/sm100/ptx.cuh"
#include "kernels/sm100/schedule.hpp"

namespace nvfp4 {
namespace sm100 {
// Internal linkage: the CUDA build and the host execution each get their own copy.
namespace {

struct KernelArgs {
  uint16_t* c = nullptr;         // [L, M, N] fp16
  float* partials = nullptr;     // [tiles * splits][kBlockM][kBlockN] FP32, split-K only
  uint32_t* counters = nullptr;  // [tiles] arrivals per tile; the last CTA resets it to 0
  WorkPlan plan;
  int m = 0, n = 0;
};

NVFP4_HD KernelArgs make_kernel_args(const WorkPlan& plan, int64_t m, int64_t n, uint16_t* c,
                                     void* workspace, uint32_t* counters) {
  KernelArgs a;
  a.c = c;
  a.partials = static_cast<float*>(workspace);
  a.counters = counters;
  a.plan = plan;
  a.m = static_cast<int>(m);  // shape_error keeps M and N below 2^31
  a.n = static_cast<int>(n);
  return a;
}

// Where each piece lives in the (1024-byte aligned) dynamic shared memory.
struct SmemLayout {
  uint8_t* base;
  __device__ uint8_t* a(int s) const { return base + s * kAStageBytes; }
  __device__ uint8_t* b(int s) const { return base + kStages * kAStageBytes + s * kBStageBytes; }
  __device__ uint8_t* sfa(int s) const {
    return base + kStages * (kAStageBytes + kBStageBytes) + s * kSfStageBytes;
  }
  __device__ uint8_t* sfb(int s) const {
    return base + kStages * (kAStageBytes + kBStageBytes + kSfStageBytes) + s * kSfStageBytes;
  }
  __device__ uint64_t* bars() const {
    return reinterpret_cast<uint64_t*>(base + kStages * kStageBytes);
  }
  __device__ uint64_t* full(int s) const { return bars() + s; }                    // TMA -> MMA
  __device__ uint64_t* empty(int s) const { return bars() + kStages + s; }         // MMA -> TMA
  __device__ uint64_t* acc_full(int b) const { return bars() + 2 * kStages + b; }  // MMA -> epi
  __device__ uint64_t* acc_empty(int b) const { return bars() + 2 * kStages + kAccBuffers + b; }
  __device__ uint32_t* tmem_slot() const {
    return reinterpret_cast<uint32_t*>(bars() + 2 * kStages + 2 * kAccBuffers);
  }
  __device__ volatile uint32_t* last_flag() const { return tmem_slot() + 1; }
};

// Watchdog site numbers printed when a wait times out.
enum WaitSite : int {
  kWaitEmpty = 1,
  kWaitAccEmpty = 2,
  kWaitFull = 3,
  kWaitAccFull = 4,
  kWaitLoadTail = 5
};

__device__ __forceinline__ uint32_t fp16_pair(float lo, float hi) {
  return static_cast<uint32_t>(__half_as_ushort(__float2half_rn(lo))) |
         (static_cast<uint32_t>(__half_as_ushort(__float2half_rn(hi))) << 16);
}

// 32 consecutive outputs of one row: four 16-byte stores (N % 32 == 0 keeps them aligned).
__device__ __forceinline__ void store_fp16x32(uint16_t* dst, const float (&v)[32]) {
  uint4* d = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int q = 0; q < 4; ++q)
    ptx::st_global(d + q, make_uint4(fp16_pair(v[8 * q + 0], v[8 * q + 1]),
                                     fp16_pair(v[8 * q + 2], v[8 * q + 3]),
                                     fp16_pair(v[8 * q + 4], v[8 * q + 5]),
                                     fp16_pair(v[8 * q + 6], v[8 * q + 7])));
}

__device__ __forceinline__ float* partial_ptr(const KernelArgs& args, const WorkUnit& w, int split,
                                              int row_in_tile, int col_in_tile) {
  const int64_t slab = static_cast<int64_t>(w.tile) * args.plan.splits + split;
  return args.partials + (slab * kBlockM + row_in_tile) * kBlockN + col_in_tile;
}

__device__ void run_producer(const SmemLayout& sm, const KernelArgs& args, const CUtensorMap* map_a,
                             const CUtensorMap* map_b, const CUtensorMap* map_sfa,
                             const CUtensorMap* map_sfb) {
  const WorkPlan& plan = args.plan;
  int stage = 0;
  uint32_t phase = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x) {
    const WorkUnit w = decode_unit(plan, u);
    for (int kt = w.k_begin; kt < w.k_end; ++kt) {
      // A fresh barrier counts as having completed the phase before phase 0: the first pass
      // over the ring does not wait.
      ptx::mbar_wait(sm.empty(stage), planted(KernelPlant::BarrierPhase) ? phase : phase ^ 1u,
                     kWaitEmpty);
      ptx::mbar_arrive_expect_tx(sm.full(stage), kStageBytes);
      ptx::tma_load_3d(sm.a(stage), map_a, sm.full(stage), kt * kBlockKBytes, w.m_tile * kBlockM,
                       w.batch);
      ptx::tma_load_3d(sm.b(stage), map_b, sm.full(stage), kt * kBlockKBytes, w.n_tile * kBlockN,
                       w.batch);
      // Scale maps index 128-row blocks of all batches in their outermost dimension.
      ptx::tma_load_3d(sm.sfa(stage), map_sfa, sm.full(stage), 0, kt * kMmasPerStage,
                       w.batch * plan.m_tiles + w.m_tile);
      ptx::tma_load_3d(sm.sfb(stage), map_sfb, sm.full(stage), 0, kt * kMmasPerStage,
                       w.batch * plan.n_tiles + w.n_tile);
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
  // Load tail: wait for the MMA warp's release of every stage's last use, so no commit is
  // still to arrive on a barrier of this CTA's shared memory when the CTA exits (CUTLASS's
  // producer does the same). A stage never used completes at once (fresh-barrier rule above).
  for (int i = 0; i < kStages; ++i) {
    ptx::mbar_wait(sm.empty(stage), phase ^ 1u, kWaitLoadTail);
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
}

__device__ void run_mma_issuer(const SmemLayout& sm, const KernelArgs& args, uint32_t tmem_base) {
  const WorkPlan& plan = args.plan;
  const uint32_t idesc = make_nvfp4_instr_desc(kBlockM, kBlockN).pack();
  int stage = 0;
  uint32_t phase = 0;
  int local = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x, ++local) {
    const WorkUnit w = decode_unit(plan, u);
    const int buf = local & 1;
    const uint32_t acc_phase = static_cast<uint32_t>(local >> 1) & 1u;
    ptx::mbar_wait(sm.acc_empty(buf), acc_phase ^ 1u, kWaitAccEmpty);  // epilogue drained it
    ptx::tc_fence_after_sync();
    const uint32_t d_tmem = tmem_base + static_cast<uint32_t>(buf * kBlockN);
    for (int kt = w.k_begin; kt < w.k_end; ++kt) {
      ptx::mbar_wait(sm.full(stage), phase, kWaitFull);
      if (!planted(KernelPlant::NoFenceAfterWait)) ptx::tc_fence_after_sync();
      // Scales of this stage go to their own TMEM columns: an MMA reading a previous stage's
      // columns may still be in flight (tcgen05.mma -> tcgen05.cp is not an ordered pair).
      // Reuse is safe: full(stage) arrives only after empty(stage), i.e. after those MMAs.
      const uint32_t sfa_tmem =
          tmem_base + kSfColBase +
          (planted(KernelPlant::AliasedScaleColumns) ? 0 : stage * kSfColsPerStage);
      const uint32_t sfb_tmem = sfa_tmem + kSfaColsPerStage;
      const uint32_t sfa_smem = ptx::smem_addr(sm.sfa(stage));
      const uint32_t sfb_smem = ptx::smem_addr(sm.sfb(stage));
#pragma unroll
      for (int j = 0; j < kMmasPerStage; ++j) {
        ptx::tmem_copy_scale_atom(sfa_tmem + j * kSfColsPerMma,
                                  make_scale_atom_desc(sfa_smem + j * kAtomBytes).pack());
        ptx::tmem_copy_scale_atom(sfb_tmem + j * kSfColsPerMma,
                                  make_scale_atom_desc(sfb_smem + j * kAtomBytes).pack());
      }
      const uint32_t a_smem = ptx::smem_addr(sm.a(stage));
      const uint32_t b_smem = ptx::smem_addr(sm.b(stage));
#pragma unroll
      for (int j = 0; j < kMmasPerStage; ++j) {
        // K step j = 32 bytes further along the 128-byte swizzled row; the hardware applies
        // the swizzle to the computed addresses, so the start address simply advances.
        const uint32_t k_bytes =
            static_cast<uint32_t>(j * (planted(KernelPlant::KStepInRows) ? 128 : kMmaK / 2));
        SmemDesc a_desc = make_kmajor_sw128_desc(a_smem + k_bytes);
        if (planted(KernelPlant::SwizzleMode)) a_desc.swizzle = SmemSwizzle::B128Atom32;
        ptx::mma_nvfp4(d_tmem, a_desc.pack(), make_kmajor_sw128_desc(b_smem + k_bytes).pack(), idesc,
                       sfa_tmem + j * kSfColsPerMma, sfb_tmem + j * kSfColsPerMma,
                       kt > w.k_begin || j > 0);
      }
      ptx::mma_commit(sm.empty(stage));  // frees the stage once these MMAs have read it
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    ptx::mma_commit(sm.acc_full(buf));  // accumulator complete
  }
}

__device__ void run_epilogue(const SmemLayout& sm, const KernelArgs& args, uint32_t tmem_base,
                             int warp, int lane) {
  const WorkPlan& plan = args.plan;
  const int quarter = warp % 4;  // the TMEM lane quarter this warp may access
  const int row_in_tile = quarter * 32 + lane;
  const int epi_tid = (warp - 2) * 32 + lane;
  int local = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x, ++local) {
    const WorkUnit w = decode_unit(plan, u);
    const int buf = local & 1;
    const uint32_t acc_phase = static_cast<uint32_t>(local >> 1) & 1u;
    ptx::mbar_wait(sm.acc_full(buf), acc_phase, kWaitAccFull);
    ptx::tc_fence_after_sync();

    const int64_t row = static_cast<int64_t>(w.m_tile) * kBlockM + row_in_tile;
    const bool row_ok = planted(KernelPlant::NoMTailMask) || row < args.m;
    const uint32_t taddr = tmem_base + (static_cast<uint32_t>(quarter * 32) << 16) +
                           static_cast<uint32_t>(buf * kBlockN);
    if (planted(KernelPlant::AccReleasedEarly)) {
      ptx::tc_fence_before_sync();
      __syncwarp();
      if (lane == 0) ptx::mbar_arrive(sm.acc_empty(buf));
    }
#pragma unroll 1
    for (int c = 0; c < kBlockN; c += 32) {
      float v[32];
      // tcgen05.ld is .sync.aligned: every lane must reach it together, so the warp converges
      // first (the per-lane stores of the previous column block may have diverged it).
      if (!planted(KernelPlant::NoSyncwarpBeforeLd)) __syncwarp();
      ptx::tmem_load_32cols(taddr + c, v);
      const int64_t col = static_cast<int64_t>(w.n_tile) * kBlockN + c;
      if (row_ok && col < args.n) {
        if (plan.splits == 1) {
          store_fp16x32(args.c + (static_cast<int64_t>(w.batch) * args.m + row) * args.n + col, v);
        } else {
          float4* p = reinterpret_cast<float4*>(partial_ptr(args, w, w.split, row_in_tile, c));
#pragma unroll
          for (int q = 0; q < 8; ++q)
            ptx::st_global(p + q, make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]));
        }
      }
    }
    // The accumulator may now be overwritten by the next unit's MMAs: the fence orders this
    // warp's tcgen05.ld before the arrive that hands the accumulator to the MMA warp.
    if (!planted(KernelPlant::AccReleasedEarly)) {
      if (!planted(KernelPlant::NoFenceBeforeArrive)) ptx::tc_fence_before_sync();
      __syncwarp();
      if (lane == 0) ptx::mbar_arrive(sm.acc_empty(buf));
    }

    if (plan.splits == 1) continue;
    // Split-K: the last of the tile's CTAs to finish sums all partials in split order, so the
    // result does not depend on which CTA finished last (threadfence-reduction pattern).
    __threadfence();
    ptx::named_barrier_sync(1, 32 * kEpilogueWarps);
    if (epi_tid == 0)
      *sm.last_flag() =
          atomicAdd(args.counters + w.tile, 1u) == static_cast<uint32_t>(plan.splits - 1);
    ptx::named_barrier_sync(1, 32 * kEpilogueWarps);
    if (!*sm.last_flag()) continue;
    __threadfence();
    if (row_ok) {
#pragma unroll 1
      for (int c = 0; c < kBlockN; c += 32) {
        const int64_t col = static_cast<int64_t>(w.n_tile) * kBlockN + c;
        if (col >= args.n) break;
        float acc[32];
#pragma unroll
        for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
        for (int s = 0; s < plan.splits; ++s) {
          // L2 loads (.cg): other SMs wrote these, and L1 is not coherent.
          const float4* p =
              reinterpret_cast<const float4*>(partial_ptr(args, w, s, row_in_tile, c));
#pragma unroll
          for (int q = 0; q < 8; ++q) {
            const float4 x = __ldcg(p + q);
            acc[4 * q] += x.x;
            acc[4 * q + 1] += x.y;
            acc[4 * q + 2] += x.z;
            acc[4 * q + 3] += x.w;
          }
        }
        store_fp16x32(args.c + (static_cast<int64_t>(w.batch) * args.m + row) * args.n + col, acc);
      }
    }
    if (epi_tid == 0) args.counters[w.tile] = 0;  // every split has arrived: ready for next run
  }
}

// One CTA: barrier and tensor-memory set-up, the three roles, tear-down. `smem_raw` is the
// dynamic shared memory; the maps are the kernel's __grid_constant__ parameters.
__device__ void gemm_cta(uint8_t* smem_raw, const CUtensorMap* map_a, const CUtensorMap* map_b,
                         const CUtensorMap* map_sfa, const CUtensorMap* map_sfb,
                         const KernelArgs& args) {
  // The 128B-swizzled tiles need 1024-byte aligned addresses in the shared window.
  const uint32_t raw = ptx::smem_addr(smem_raw);
  constexpr uint32_t kAlign = planted(KernelPlant::SmemAlign128) ? 128u : 1024u;
  const SmemLayout sm{smem_raw + ((kAlign - (raw & (kAlign - 1))) & (kAlign - 1))};
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbar_init(sm.full(s), 1);   // the producer's arrive.expect_tx (+ TMA bytes)
      ptx::mbar_init(sm.empty(s), 1);  // one tcgen05.commit
    }
    for (int b = 0; b < kAccBuffers; ++b) {
      ptx::mbar_init(sm.acc_full(b), 1);                // one tcgen05.commit
      ptx::mbar_init(sm.acc_empty(b), kEpilogueWarps);  // one arrive per epilogue warp
    }
    ptx::fence_barrier_init();
  }
  if (warp == 0 && lane == 0) {
    ptx::prefetch_tensormap(map_a);
    ptx::prefetch_tensormap(map_b);
    ptx::prefetch_tensormap(map_sfa);
    ptx::prefetch_tensormap(map_sfb);
  }
  if (warp == 1) {
    ptx::tmem_alloc(sm.tmem_slot(), kTmemCols);
    ptx::tmem_relinquish();  // one CTA per SM: nobody else will allocate
  }
  ptx::tc_fence_before_sync();
  __syncthreads();
  ptx::tc_fence_after_sync();
  const uint32_t tmem_base = *sm.tmem_slot();

  if (warp == 0) {
    if (lane == 0) run_producer(sm, args, map_a, map_b, map_sfa, map_sfb);
  } else if (warp == 1) {
    if (lane == 0) run_mma_issuer(sm, args, tmem_base);
  } else {
    run_epilogue(sm, args, tmem_base, warp, lane);
  }

  // Every accumulator was read (epilogue waited on each commit), so TMEM can be released.
  ptx::tc_fence_before_sync();
  __syncthreads();
  if (warp == 1) {
    __syncwarp();
    ptx::tc_fence_after_sync();
    ptx::tmem_dealloc(tmem_base, kTmemCols);
  }
}

}  // namespace
}  // namespace sm100
}  // namespace nvfp4
