// The Blackwell instructions the kernel uses, one named helper each (PTX ISA 9.x: mbarrier
// 9.7.13.15, cp.async.bulk.tensor 9.7.9.25, tcgen05 9.7.16). Compiled for the family target
// sm_100f alone (CMake target nvfp4_sm100; docs/kernels.md, "Which GPUs run it"). With NVFP4_SM100_HOST_MODEL defined, the same helpers come from
// kernels/sm100/host_model/ptx_host.hpp instead, executed by host models of the hardware, so the
// kernel's own code (kernel.cuh) runs unchanged on the host; mbar_wait (below) is shared.
#pragma once

#include <cuda.h>  // CUtensorMap (type only; no driver library is linked)

#include <cstdint>
#include <cstdio>

#if defined(NVFP4_SM100_HOST_MODEL)
#include "kernels/sm100/host_model/ptx_host.hpp"
#else
namespace nvfp4 {
namespace sm100 {
namespace ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier -------------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

// Makes the initialised barriers visible to the async proxy (TMA, tcgen05.commit).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---- TMA ------------------------------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// One 3-D box of `map` at (c0, c1, c2) into shared memory; completes `bytes` on `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int32_t c0, int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// ---- tcgen05: tensor memory -----------------------------------------------------------------

// Whole warp: allocates `cols` columns and writes their base address to shared memory.
__device__ __forceinline__ void tmem_alloc(uint32_t* dst, uint32_t cols) {
  asm volatile(
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(dst)),
      "r"(cols)
      : "memory");
}
__device__ __forceinline__ void tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(cols)
               : "memory");
}

__device__ __forceinline__ void tc_fence_before_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
__device__ __forceinline__ void tc_fence_after_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

// One 512-byte blocked scale atom (32 rows x 128 bits in shared memory) to 4 TMEM columns,
// replicated to all four 32-lane quarters (the layout block-scaled MMAs read for M = 128).
__device__ __forceinline__ void tmem_copy_scale_atom(uint32_t taddr, uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(sdesc)
               : "memory");
}

// D[tmem] (+)= (A * scale_A) x (B * scale_B)^T for one 128 x N x 64 NVFP4 block: E2M1 operands
// from shared memory, UE4M3 scales (one per 16 elements) from tensor memory.
__device__ __forceinline__ void mma_nvfp4(uint32_t d_taddr, uint64_t a_desc, uint64_t b_desc,
                                          uint32_t idesc, uint32_t sfa_taddr, uint32_t sfb_taddr,
                                          bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %6, 0;\n"
      // .block16 (one UE4M3 scale per 16 elements) is the spelling sm_100f accepts; the older
      // .scale_vec::4X means the same but is accepted for sm_100a/sm_103a only.
      "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"
      " [%0], %1, %2, %3, [%4], [%5], p;\n}\n" ::"r"(d_taddr),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(sfa_taddr), "r"(sfb_taddr),
      "r"(static_cast<uint32_t>(accumulate))
      : "memory");
}

// Arrives on `bar` once every tcgen05.mma/cp this thread issued so far has completed.
__device__ __forceinline__ void mma_commit(uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
                   smem_addr(bar))
               : "memory");
}

// Warp-collective: 32 lanes x 32 consecutive 32-bit columns; thread i gets lane (base + i).
// The load and its wait share one asm statement so no use of the registers can be scheduled
// before the asynchronous load has landed.
__device__ __forceinline__ void tmem_load_32cols(uint32_t taddr, float (&v)[32]) {
  uint32_t r[32];
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
      "tcgen05.wait::ld.sync.aligned;"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
        "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
        "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]),
        "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]),
        "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
      : "r"(taddr)
      : "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) v[i] = __uint_as_float(r[i]);
}

// ---- global memory --------------------------------------------------------------------------

// One 16-byte store to global memory. Its own helper so that the host execution can check each
// store against the launch's buffers (an out-of-bounds store is a named finding there).
template <typename T>
__device__ __forceinline__ void st_global(T* p, const T& v) {
  static_assert(sizeof(T) == 16, "the epilogue stores 16 bytes at a time");
  *p = v;
}

// ---- other synchronisation ------------------------------------------------------------------

// Named barrier for the epilogue warps only (id 0 is __syncthreads).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace ptx
}  // namespace sm100
}  // namespace nvfp4
#endif  // NVFP4_SM100_HOST_MODEL

namespace nvfp4 {
namespace sm100 {
namespace ptx {

// Waits for the phase of `parity` to complete. A wait longer than kWatchdogNs means a lost
// arrival (wrong byte count, bad descriptor, a fault in an async unit): report where and trap,
// so a first run on new hardware fails with an error instead of hanging the GPU.
constexpr uint64_t kWatchdogNs = 10ull * 1000 * 1000 * 1000;

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity, int site) {
#if defined(NVFP4_SM100_HOST_MODEL)
  if (host_model::planted_skip_wait(site)) return;  // a planted bug of the model's self-test
#endif
  if (mbar_try_wait(bar, parity)) return;
  const uint64_t start = global_timer_ns();
  while (!mbar_try_wait(bar, parity)) {
    if (global_timer_ns() - start > kWatchdogNs) {
      printf("nvfp4 sm100 watchdog: block %d thread %d stuck at wait site %d (parity %u)\n",
             static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x), site, parity);
      __trap();
    }
  }
}

}  // namespace ptx
}  // namespace sm100
}  // namespace nvfp4
