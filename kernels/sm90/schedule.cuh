// The split-K reduction of both sm90 paths (one definition): the last arriver of a tile sums its
// pieces in split order. The units it reduces, and the order CTAs walk them in, are walk.hpp's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/walk.hpp"

namespace nvfp4::sm90 {

constexpr int kConsumerThreads = 256;  // two consumer warpgroups, both paths

// How the last arriver tells the other consumer threads (step 2 of reduce_split_k). Each
// kernel keeps the one measured best for it, both racecheck-clean on an H200 (docs/kernels.md,
// the history's "split-K broadcast" rows):
//   BarrierOr: bar.red.or.pred carries the decision, nothing in shared memory. The fused kernel
//     needs it: with a flag racecheck reports the flag's write against its read when a CTA runs
//     several units, even with a barrier after the read.
//   SmemFlag: a shared-memory int written by thread 0, read after one barrier, and a second
//     barrier after the read so the next unit's write cannot pass it. The fp16 mainloop needs
//     it: bar.red.or.pred in its code slowed even split-1 tiles that never reduce.
enum class SplitKBroadcast { BarrierOr, SmemFlag };

// Step 1: this thread's R FP32 accumulators (acc(i), i < R) stored as split `split`'s partial
// in tile_ws (float4 q of thread ct at q * 256 + ct: coalesced).
template <int R, class Acc>
__device__ __forceinline__ void store_partial(Acc& acc, float* tile_ws, int split, int ct) {
  static_assert(R % 4 == 0, "accumulators per thread: whole float4s");
  float4* mine = reinterpret_cast<float4*>(tile_ws + static_cast<size_t>(split) * (kConsumerThreads * R));
#pragma unroll
  for (int q = 0; q < R / 4; ++q)
    __stcg(mine + q * kConsumerThreads + ct,
           make_float4(acc(4 * q), acc(4 * q + 1), acc(4 * q + 2), acc(4 * q + 3)));
}

// Thread 0's arrival on a tile's counter, returning the count before it: atom.acq_rel.gpu. Its
// release half publishes every consumer thread's partial, since the consumer barrier before it
// ordered their stores first (release is cumulative); the barrier after it hands its acquire on
// to the readers - the arrive/wait pattern of CUTLASS's GenericBarrier. One atomic instead of a
// fence per thread (docs/kernels.md, history "split-K's fence").
struct ArriveAcqRel {
  __device__ __forceinline__ int operator()(int* counter) const {
    int old;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
    return old;
  }
};

// Step 2, after the consumer barrier that follows step 1: thread 0 counts the arrival
// (`arrive`); the last of `splits` resets the counter to 0 (clean for the next call) and tells
// the others (kHow; flag: SmemFlag's int, else unused). True in every consumer thread of the
// last arriver. kAfterGridWait: wait for the preceding grid (PDL) before touching the counter,
// which that grid zeroes.
template <bool kAfterGridWait, SplitKBroadcast kHow, class Arrive = ArriveAcqRel>
__device__ __forceinline__ bool split_k_last(int* counter, int* flag, int splits, int ct, Arrive arrive = {}) {
  bool last = false;
  if (ct == 0) {
    if constexpr (kAfterGridWait) asm volatile("griddepcontrol.wait;\n" ::: "memory");
    last = arrive(counter) == splits - 1;
    if (last) *counter = 0;
    if constexpr (kHow == SplitKBroadcast::SmemFlag) *flag = last;
  }
  if constexpr (kHow == SplitKBroadcast::SmemFlag) {
    ptx::named_bar_sync(1, kConsumerThreads);
    last = *flag != 0;
    ptx::named_bar_sync(1, kConsumerThreads);
    return last;
  } else {
    return ptx::named_bar_or(1, kConsumerThreads, last);
  }
}

// acc += one split's partial (this thread's float4s at src + q * kConsumerThreads, q < kQ).
template <int kQ, class Acc>
__device__ __forceinline__ void add_partial(Acc& acc, const float4* src) {
#pragma unroll
  for (int q = 0; q < kQ; ++q) {
    const float4 v = __ldcg(src + q * kConsumerThreads);
    acc(4 * q) += v.x;
    acc(4 * q + 1) += v.y;
    acc(4 * q + 2) += v.z;
    acc(4 * q + 3) += v.w;
  }
}

// Step 3, in the last arriver: acc set to the sum of all `splits` partials in split order
// 0..S-1 (its own re-read too), so the result does not depend on the order they arrived in.
template <int R, class Acc>
__device__ __forceinline__ void sum_partials(Acc& acc, const float* tile_ws, int splits, int ct) {
  constexpr int kQ = R / 4;
  constexpr size_t kSplitQ = kConsumerThreads * R / 4;  // float4s per partial
  const float4* src = reinterpret_cast<const float4*>(tile_ws) + ct;
#pragma unroll
  for (int q = 0; q < kQ; ++q) {
    const float4 v = __ldcg(src + q * kConsumerThreads);
    acc(4 * q) = v.x;
    acc(4 * q + 1) = v.y;
    acc(4 * q + 2) = v.z;
    acc(4 * q + 3) = v.w;
  }
  for (int s = 1; s < splits; ++s) add_partial<kQ>(acc, src + static_cast<size_t>(s) * kSplitQ);
}

// Split-K, "the last arriver sums in split order", run by all kConsumerThreads consumer threads
// (ct = 0..255; named barrier 1) of the CTA that computed split `split` of a tile: steps 1-3
// above. Returns true where acc now holds the tile's sum (store it), false elsewhere.
template <int R, bool kAfterGridWait, SplitKBroadcast kHow, class Acc>
__device__ __forceinline__ bool reduce_split_k(Acc&& acc, float* tile_ws, int split, int splits,
                                               int* counter, int* flag, int ct) {
  store_partial<R>(acc, tile_ws, split, ct);
  ptx::named_bar_sync(1, kConsumerThreads);
  if (!split_k_last<kAfterGridWait, kHow>(counter, flag, splits, ct)) return false;
  sum_partials<R>(acc, tile_ws, splits, ct);
  return true;
}

}  // namespace nvfp4::sm90
