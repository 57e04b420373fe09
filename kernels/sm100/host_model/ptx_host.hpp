// kernels/sm100/ptx.cuh's helpers for the host execution (NVFP4_SM100_HOST_MODEL): the same
// names and signatures, executed by the host models (model.hpp) instead of inline PTX.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/sm100/host_model/cuda_host.hpp"
#include "kernels/sm100/host_model/model.hpp"

namespace nvfp4 {
namespace sm100 {
namespace ptx {

inline uint32_t smem_addr(const void* p) { return host_model::smem_addr(p); }

inline void mbar_init(uint64_t* bar, uint32_t count) {
  host_model::mbar_init(smem_addr(bar), count);
}
inline void fence_barrier_init() {}
inline void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  host_model::mbar_arrive(smem_addr(bar), bytes);
}
inline void mbar_arrive(uint64_t* bar) { host_model::mbar_arrive(smem_addr(bar), 0); }
inline bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  return host_model::mbar_try_wait(smem_addr(bar), parity);
}
inline uint64_t global_timer_ns() { return host_model::global_timer_ns(); }

inline void prefetch_tensormap(const CUtensorMap* map) { host_model::prefetch_tensormap(map); }
inline void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                        int32_t c2) {
  host_model::tma_load_3d(smem_addr(dst), map, smem_addr(bar), c0, c1, c2);
}

inline void tmem_alloc(uint32_t* dst, uint32_t cols) {
  host_model::tmem_alloc(smem_addr(dst), cols);
}
inline void tmem_relinquish() { host_model::tmem_relinquish(); }
inline void tmem_dealloc(uint32_t taddr, uint32_t cols) { host_model::tmem_dealloc(taddr, cols); }
// The host model executes each tcgen05 operation's effects under one lock, so the fences have
// nothing to order there; it checks instead that they stand where the PTX ISA requires them
// (after a wait that precedes a tcgen05 op, before the sync that hands tensor memory on).
inline void tc_fence_before_sync() { host_model::tc_fence_before(); }
inline void tc_fence_after_sync() { host_model::tc_fence_after(); }
inline void tmem_copy_scale_atom(uint32_t taddr, uint64_t sdesc) {
  host_model::tmem_copy_scale_atom(taddr, sdesc);
}
inline void mma_nvfp4(uint32_t d_taddr, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                      uint32_t sfa_taddr, uint32_t sfb_taddr, bool accumulate) {
  host_model::mma_nvfp4(d_taddr, a_desc, b_desc, idesc, sfa_taddr, sfb_taddr, accumulate);
}
inline void mma_commit(uint64_t* bar) { host_model::mma_commit(smem_addr(bar)); }
inline void tmem_load_32cols(uint32_t taddr, float (&v)[32]) {
  host_model::tmem_load_32cols(taddr, v);
}
template <typename T>
inline void st_global(T* p, const T& v) {
  static_assert(sizeof(T) == 16, "the epilogue stores 16 bytes at a time");
  host_model::global_store(p, &v, sizeof(T));
}
inline void named_barrier_sync(uint32_t id, uint32_t threads) {
  host_model::block_barrier(id, threads);
}

}  // namespace ptx
}  // namespace sm100
}  // namespace nvfp4
