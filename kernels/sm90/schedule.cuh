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

// How a split's partial is published to the last arriver and acquired by it (steps 1-3 below):
//   EachSc:     every thread __threadfence()s (fence.sc.gpu) after its stores, and again before
//               its reads once it knows it is in the last arriver;
//   EachAcqRel: the same with fence.acq_rel.gpu;
//   OneAtomic:  no per-thread fence: the consumer barrier orders every thread's stores before
//               thread 0's atom.acq_rel.gpu (release is cumulative), whose acquire the barrier
//               hands on to the readers - the arrive/wait pattern of CUTLASS's GenericBarrier.
enum class SplitKFence { EachSc, EachAcqRel, OneAtomic };
constexpr SplitKFence kSplitKFence = SplitKFence::OneAtomic;  // the kernels' form

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

// Split-K, "the last arriver sums in split order", run by all kConsumerThreads consumer threads
// (ct = 0..255; named barrier 1) of the CTA that computed split `split` of a tile:
//   1. store this thread's R FP32 accumulators (acc(i), i < R) as the split's partial in
//      tile_ws (float4 q of thread ct at q * 256 + ct: coalesced);
//   2. one thread counts the arrival on the tile's counter; the last of `splits` resets it to 0
//      (clean for the next call) and tells the others (kHow; flag: SmemFlag's int, else unused);
//   3. the last arriver sets acc to the sum of all partials in split order 0..S-1, so the result
//      does not depend on the order the splits arrived in. kReread: its own partial is re-read
//      from tile_ws; otherwise it stays in acc and the splits before it are summed in a second
//      set of registers (chunks of at most 64 floats), then added to it: the same additions in
//      the same order (a + b == b + a exactly), so the same bits.
// Returns true where acc now holds the tile's sum (store it), false elsewhere. kAfterGridWait:
// wait for the preceding grid (PDL) before touching the counter, which that grid zeroes.
template <int R, bool kAfterGridWait, SplitKBroadcast kHow, SplitKFence kFence = kSplitKFence,
          bool kReread = true, class Acc>
__device__ __forceinline__ bool reduce_split_k(Acc&& acc, float* tile_ws, int split, int splits,
                                               int* counter, int* flag, int ct) {
  static_assert(R % 4 == 0, "accumulators per thread: whole float4s");
  constexpr int kQ = R / 4;
  float4* mine = reinterpret_cast<float4*>(tile_ws + static_cast<size_t>(split) * (kConsumerThreads * R));
#pragma unroll
  for (int q = 0; q < kQ; ++q)
    __stcg(mine + q * kConsumerThreads + ct,
           make_float4(acc(4 * q), acc(4 * q + 1), acc(4 * q + 2), acc(4 * q + 3)));
  if constexpr (kFence == SplitKFence::EachSc) __threadfence();
  if constexpr (kFence == SplitKFence::EachAcqRel) asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
  ptx::named_bar_sync(1, kConsumerThreads);
  bool last = false;
  if (ct == 0) {
    if constexpr (kAfterGridWait) asm volatile("griddepcontrol.wait;\n" ::: "memory");
    int old;
    if constexpr (kFence == SplitKFence::OneAtomic)
      asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
    else
      old = atomicAdd(counter, 1);
    last = old == splits - 1;
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
  if constexpr (kFence == SplitKFence::EachSc) __threadfence();
  if constexpr (kFence == SplitKFence::EachAcqRel) asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
  const float4* src = reinterpret_cast<const float4*>(tile_ws) + ct;
  constexpr size_t kSplitQ = kConsumerThreads * R / 4;  // float4s per partial
  if constexpr (kReread) {
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const float4 v = __ldcg(src + q * kConsumerThreads);
      acc(4 * q) = v.x;
      acc(4 * q + 1) = v.y;
      acc(4 * q + 2) = v.z;
      acc(4 * q + 3) = v.w;
    }
    for (int s = 1; s < splits; ++s) add_partial<kQ>(acc, src + static_cast<size_t>(s) * kSplitQ);
  } else {
    // splits before this one: their running sum t, chunk by chunk, then t + own
    if (split > 0) {
      constexpr int kC = kQ > 16 ? 16 : kQ;  // float4s per chunk
      static_assert(kQ % kC == 0, "whole chunks");
#pragma unroll
      for (int c0 = 0; c0 < kQ; c0 += kC) {
        float4 t[kC];
#pragma unroll
        for (int q = 0; q < kC; ++q) t[q] = __ldcg(src + (c0 + q) * kConsumerThreads);
        auto ta = [&](int i) -> float& { return reinterpret_cast<float*>(t)[i]; };
        for (int s = 1; s < split; ++s)
          add_partial<kC>(ta, src + static_cast<size_t>(s) * kSplitQ + c0 * kConsumerThreads);
#pragma unroll
        for (int q = 0; q < kC; ++q) {
          const int i = 4 * (c0 + q);
          acc(i) = t[q].x + acc(i);
          acc(i + 1) = t[q].y + acc(i + 1);
          acc(i + 2) = t[q].z + acc(i + 2);
          acc(i + 3) = t[q].w + acc(i + 3);
        }
      }
    }
    for (int s = split + 1; s < splits; ++s) add_partial<kQ>(acc, src + static_cast<size_t>(s) * kSplitQ);
  }
  return true;
}

}  // namespace nvfp4::sm90
