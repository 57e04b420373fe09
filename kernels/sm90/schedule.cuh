// The persistent schedule and the split-K reduction of both sm90 paths (one definition each).
//
// Persistent CTAs walk work units u = blockIdx.x, += gridDim.x. A unit is one K split of one
// output tile; units are tile-major (the splits of a tile adjacent), and within a batch the tiles
// go in bands of `group` tile-rows, M fastest inside a band, so CTAs running together share A
// and B panels in L2.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/sm90/ptx.cuh"

namespace nvfp4::sm90 {

constexpr int kConsumerThreads = 256;  // two consumer warpgroups, both paths

struct WorkUnit {
  int order;     // u / splits: the tile's place in the schedule, unique per tile
  int batch, tm, tn;
  int split;     // which of the tile's `splits` pieces this is
  int splits;
  int kb0, kb1;  // K blocks [kb0, kb1)
};

// The tile in place `order` of the schedule (batch, then bands of `group` tile-rows, M fastest
// inside a band); split and K range left to the caller.
__device__ __forceinline__ WorkUnit tile_unit(int order, int tiles_m, int tiles_n, int group) {
  WorkUnit x;
  x.order = order;
  const int per_batch = tiles_m * tiles_n;
  x.batch = x.order / per_batch;
  const int r = x.order - x.batch * per_batch;
  const int band = r / (group * tiles_n), within = r - band * (group * tiles_n);
  const int first = band * group;
  const int gm = min(group, tiles_m - first);
  x.tm = first + within % gm;
  x.tn = within / gm;
  x.split = 0;
  x.splits = 1;
  x.kb0 = x.kb1 = 0;
  return x;
}

__device__ __forceinline__ WorkUnit work_unit(int u, int tiles_m, int tiles_n, int splits, int group,
                                              int nk) {
  WorkUnit x = tile_unit(u / splits, tiles_m, tiles_n, group);
  x.split = u - x.order * splits;
  x.splits = splits;
  // balanced K ranges: split s gets K blocks [s*nk/S, (s+1)*nk/S), never empty (S <= nk)
  x.kb0 = static_cast<int>((static_cast<long long>(x.split) * nk) / splits);
  x.kb1 = static_cast<int>((static_cast<long long>(x.split + 1) * nk) / splits);
  return x;
}

// How the last arriver tells the other consumer threads (step 2 of reduce_split_k). Each
// kernel keeps the one measured best for it, both racecheck-clean on an H200 (docs/kernels.md,
// the history's "split-K broadcast" rows):
//   BarrierOr: bar.red.or.pred carries the decision, nothing in shared memory. The fused kernel
//     needs it: with a flag racecheck reports the flag's write against its read when a CTA runs
//     several units, even with a barrier after the read.
//   SmemFlag: a shared-memory int written by thread 0, read after one barrier, and a second
//     barrier after the read so the next unit's write cannot pass it. The fp16 mainloop needs
//     it: bar.red.or.pred in its code slowed even split-1 tiles that never reduce 13 %
//     (1024x1536x7168: 56.3 us against 49.8).
enum class SplitKBroadcast { BarrierOr, SmemFlag };

// Split-K, "the last arriver sums in split order", run by all kConsumerThreads consumer threads
// (ct = 0..255; named barrier 1) of the CTA that computed split `split` of a tile:
//   1. store this thread's R FP32 accumulators (acc(i), i < R) as the split's partial in
//      tile_ws (float4 q of thread ct at q * 256 + ct: coalesced);
//   2. one thread counts the arrival on the tile's counter; the last of `splits` resets it to 0
//      (clean for the next call) and tells the others (kHow; flag: SmemFlag's int, else unused);
//   3. the last arriver sets acc to the sum of all partials, its own re-read, in split order
//      0..S-1: the result does not depend on the order the splits arrived in.
// Returns true where acc now holds the tile's sum (store it), false elsewhere. kAfterGridWait:
// wait for the preceding grid (PDL) before touching the counter, which that grid zeroes.
template <int R, bool kAfterGridWait, SplitKBroadcast kHow, class Acc>
__device__ __forceinline__ bool reduce_split_k(Acc&& acc, float* tile_ws, int split, int splits,
                                               int* counter, int* flag, int ct) {
  static_assert(R % 4 == 0, "accumulators per thread: whole float4s");
  constexpr int kQ = R / 4;
  float4* mine = reinterpret_cast<float4*>(tile_ws + static_cast<size_t>(split) * (kConsumerThreads * R));
#pragma unroll
  for (int q = 0; q < kQ; ++q)
    __stcg(mine + q * kConsumerThreads + ct,
           make_float4(acc(4 * q), acc(4 * q + 1), acc(4 * q + 2), acc(4 * q + 3)));
  __threadfence();
  ptx::named_bar_sync(1, kConsumerThreads);
  bool last = false;
  if (ct == 0) {
    if constexpr (kAfterGridWait) asm volatile("griddepcontrol.wait;\n" ::: "memory");
    last = atomicAdd(counter, 1) == splits - 1;
    if (last) *counter = 0;
    if constexpr (kHow == SplitKBroadcast::SmemFlag) *flag = last;
  }
  if constexpr (kHow == SplitKBroadcast::SmemFlag) {
    ptx::named_bar_sync(1, kConsumerThreads);
    last = *flag != 0;
    ptx::named_bar_sync(1, kConsumerThreads);
    if (!last) return false;
  } else {
    if (!ptx::named_bar_or(1, kConsumerThreads, last)) return false;
  }
  __threadfence();
  const float4* src = reinterpret_cast<const float4*>(tile_ws) + ct;
#pragma unroll
  for (int q = 0; q < kQ; ++q) {
    const float4 v = __ldcg(src + q * kConsumerThreads);
    acc(4 * q) = v.x;
    acc(4 * q + 1) = v.y;
    acc(4 * q + 2) = v.z;
    acc(4 * q + 3) = v.w;
  }
  for (int s = 1; s < splits; ++s) {
    const float4* srcs = src + static_cast<size_t>(s) * (kConsumerThreads * R / 4);
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const float4 v = __ldcg(srcs + q * kConsumerThreads);
      acc(4 * q) += v.x;
      acc(4 * q + 1) += v.y;
      acc(4 * q + 2) += v.z;
      acc(4 * q + 3) += v.w;
    }
  }
  return true;
}

}  // namespace nvfp4::sm90
