// The fused kernel's time line written on the device (the layout and its reader: stamps.hpp).
// One thread per CTA writes each word: the header at the CTA's start (kEntry*), when its A
// producer passes the prepass's grid wait (kAReadyClk) and at its end; one record per unit at the
// unit's boundaries. Every write tests the pointer first: where it is null (every timed run) the
// kernel does nothing more.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sm90/schedule.cuh"
#include "kernels/sm90/stamps.hpp"

namespace nvfp4::sm90 {

struct TimeLine {
  uint64_t* words;     // null, or StampLayout::words(grid, units_per_cta) words of device memory
  int units_per_cta;   // units recorded per CTA (later ones are counted, not recorded)

  // `word` of this CTA's header (unit < 0) or of its unit `unit`'s record; nothing where the
  // time line is off or the unit is past the room (a thread that records nothing passes INT32_MAX).
  __device__ __forceinline__ void put(int unit, int word, uint64_t v) const {
    if (words == nullptr || unit >= units_per_cta) return;
    words[StampLayout::at(blockIdx.x, unit, units_per_cta) + word] = v;
  }
  __device__ __forceinline__ void put_clock(int unit, int word) const { put(unit, word, clock64()); }

  // ---- the CTA's header ----
  // Its start (%globaltimer, clock64, %smid): before the kernel's first barrier, so that no
  // later stamp of the CTA is earlier.
  __device__ __forceinline__ void cta_start() const {
    if (words == nullptr) return;
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    put(-1, StampLayout::kEntryNs, globaltimer());
    put(-1, StampLayout::kEntryClk, clock64());
    put(-1, StampLayout::kSm, sm);
  }
  __device__ __forceinline__ void a_ready() const { put_clock(-1, StampLayout::kAReadyClk); }
  // Its end, after `units` units.
  __device__ __forceinline__ void cta_end(int units) const {
    if (words == nullptr) return;
    put(-1, StampLayout::kEndNs, globaltimer());
    put(-1, StampLayout::kEndClk, clock64());
    put(-1, StampLayout::kUnits, uint64_t(units));
  }

  // ---- unit `rec`'s record ----
  __device__ __forceinline__ void unit_begin(int rec, const WorkUnit& x) const {
    put_clock(rec, StampLayout::kBeginClk);
    put(rec, StampLayout::kOrder, uint64_t(x.order));
    put(rec, StampLayout::kBlocks, uint64_t(uint32_t(x.kb0)) | (uint64_t(uint32_t(x.kb1)) << 32));
  }
  __device__ __forceinline__ void unit_first_block(int rec) const { put_clock(rec, StampLayout::kFirstClk); }
  __device__ __forceinline__ void unit_loop_done(int rec) const { put_clock(rec, StampLayout::kLoopClk); }
  // A split that handed its partial over (not the last arriver): its unit ends here.
  __device__ __forceinline__ void unit_handed_over(int rec, const WorkUnit& x) const {
    const uint64_t t = clock64();
    put(rec, StampLayout::kReducedClk, t);
    put(rec, StampLayout::kEndClk_, t);
    put(rec, StampLayout::kSplit, split_word(x));
  }
  // The unit holds the tile's sum (one split, or the last arriver): it stores C next.
  __device__ __forceinline__ void unit_reduced(int rec, const WorkUnit& x) const {
    put_clock(rec, StampLayout::kReducedClk);
    put(rec, StampLayout::kSplit, split_word(x) | (uint64_t(1) << 63));
  }
  __device__ __forceinline__ void unit_end(int rec) const { put_clock(rec, StampLayout::kEndClk_); }

 private:
  static __device__ __forceinline__ uint64_t globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }
  static __device__ __forceinline__ uint64_t split_word(const WorkUnit& x) {
    return uint64_t(uint32_t(x.split)) | (uint64_t(uint32_t(x.splits)) << 32);
  }
};

}  // namespace nvfp4::sm90
