// Split-K's reduction alone (docs/kernels.md, the history's "split-K across a cluster" and
// "split-K's fence" rows): the model test of the reduction's forms; the kernels run "last-one"
// (the cluster form built in them, "cluster" here, was measured slower there and reverted).
// 128 CTAs (one per SM: 160 KB of shared memory each) of 256 consumer threads hold R FP32
// accumulators per thread, as a fused or mainloop tile's split does when its K loop ends, and
// reduce them S ways, tile = S consecutive CTAs:
//   none     no reduction: every CTA stores its own accumulators (the output volume of S = 1)
//   last     schedule.cuh's reduce_split_k as the kernels ran it until 55d827f: every split
//            stores its partial, one atomic counts the arrivals, the last arriver reads all S
//            partials in split order on its own SM and stores the tile (Fence::EachSc)
//   last-acqrel   the same with fence.acq_rel.gpu per thread (Fence::EachAcqRel)
//   last-one      the same with no per-thread fence: thread 0's atom.acq_rel.gpu after the
//                 barrier (Fence::OneAtomic: the kernels' reduce_split_k)
//   last-one-own  last-one, the last arriver keeping its own partial in registers (no re-read)
//   last-bulk     last-one, the last arriver reading the partials by bulk copies (cp.async.bulk,
//                 issued by thread 0) into a ring of 8 shared-memory stages of up to 16 KB (4
//                 float4 rows of 256 threads: one chunk of one partial a stage), summed from
//                 shared memory in split order (issue 48's "partials at memory speed": is one
//                 SM's bulk read of L2-resident partials faster than 256 threads' ld.global.cg?)
// The "last" forms are schedule.cuh's steps (store_partial, split_k_last, sum_partials) with
// this bench's fences and own-partial sum around them.
//   spin     every split stores its partial, counts its arrival and spins until all S have
//            (needs every CTA resident at once), then sums 1/S of the tile from all S partials,
//            in split order, and stores that slice
//   cluster  the same with the tile's S splits as one cluster (co-scheduled by the hardware):
//            the arrival is a remote mbarrier arrive on each CTA of the cluster
//   dsmem    the cluster with the partials kept in each CTA's own shared memory, read by the
//            others over distributed shared memory; a second round of arrives says the reads
//            are done before shared memory may be reused
// Every variant's output is compared bit for bit with the host's sum in split order. Printed:
// the kernel's median time over the launches (events), the median and largest per-CTA cycles
// of the protocol (clock64), and the cluster occupancy the fused kernel's launch would get.
// Usage: build-sm90/sm90_splitk_bench [launches, default 40]   (sm_90a; NVFP4_BUILD_BENCH=ON)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/schedule.cuh"

namespace nvfp4::sm90::splitkbench {

constexpr int kCtas = 128;
constexpr int kSmem = 160 * 1024;  // one CTA per SM, room for a 128 KB partial
enum Proto { kNone, kLast, kLastAcqRel, kLastOne, kLastOneOwn, kLastBulk, kSpin, kCluster, kDsmem, kProtos };
const char* const kNames[kProtos] = {"none", "last", "last-acqrel", "last-one", "last-one-own", "last-bulk", "spin", "cluster", "dsmem"};
constexpr bool is_last(int p) {
  return p == kLast || p == kLastAcqRel || p == kLastOne || p == kLastOneOwn || p == kLastBulk;
}

__host__ __device__ inline float value(int cta, int i, int ct) {
  uint32_t h = uint32_t(cta) * 0x9E3779B1u ^ uint32_t(i) * 0x85EBCA77u ^ uint32_t(ct) * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  // exact in float on host and device alike (no product for the compiler to fuse into an add)
  return float(int(h & 0xFFFFF) - 524288) * (1.0f / 1024.0f);
}

__device__ __forceinline__ uint32_t mapa(uint32_t addr, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ void remote_arrive(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
__device__ __forceinline__ void wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nW_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra W_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ float4 ld_cluster_v4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, float4 v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
__device__ __forceinline__ float4 ld_shared_v4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ int ld_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// How a split's partial is published to the last arriver and acquired by it:
//   EachSc:     every thread __threadfence()s (fence.sc.gpu) after its stores, and again before
//               its reads once it knows it is in the last arriver; the arrival a relaxed atomicAdd;
//   EachAcqRel: the same with fence.acq_rel.gpu;
//   OneAtomic:  no per-thread fence: thread 0's atom.acq_rel.gpu (schedule.cuh, ArriveAcqRel).
enum class Fence { EachSc, EachAcqRel, OneAtomic };

template <Fence kF>
__device__ __forceinline__ void fence_each() {
  if constexpr (kF == Fence::EachSc) __threadfence();
  if constexpr (kF == Fence::EachAcqRel) asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

struct ArriveRelaxed {
  __device__ __forceinline__ int operator()(int* counter) const { return atomicAdd(counter, 1); }
};

// The last arriver's sum keeping its own partial in registers: the splits before it summed in a
// second set of registers (chunks of at most 64 floats), then added to it - the same additions
// in the same order as sum_partials (a + b == b + a exactly), so the same bits.
template <int R, class Acc>
__device__ __forceinline__ void sum_keeping_own(Acc& acc, const float* tile_ws, int split, int splits, int ct) {
  constexpr int kQ = R / 4;
  constexpr size_t kSplitQ = kConsumerThreads * R / 4;  // float4s per partial
  const float4* src = reinterpret_cast<const float4*>(tile_ws) + ct;
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

// reduce_split_k (fused kernel's broadcast, no grid wait) with fence kF; kReread: the last
// arriver re-reads its own partial (the kernels' form), else sum_keeping_own.
template <int R, Fence kF, bool kReread, class Acc>
__device__ __forceinline__ bool reduce_variant(Acc&& acc, float* tile_ws, int split, int splits, int* counter,
                                               int ct) {
  store_partial<R>(acc, tile_ws, split, ct);
  fence_each<kF>();
  ptx::named_bar_sync(1, kConsumerThreads);
  bool last;
  if constexpr (kF == Fence::OneAtomic)
    last = split_k_last<false, SplitKBroadcast::BarrierOr>(counter, nullptr, splits, ct);
  else
    last = split_k_last<false, SplitKBroadcast::BarrierOr>(counter, nullptr, splits, ct, ArriveRelaxed{});
  if (!last) return false;
  fence_each<kF>();
  if constexpr (kReread) sum_partials<R>(acc, tile_ws, splits, ct);
  else sum_keeping_own<R>(acc, tile_ws, split, splits, ct);
  return true;
}

constexpr int kBulkStages = 8;  // the ring: 8 stages of up to 16 KB
constexpr int kBulkRows = 4;    // float4 rows (of 256 threads) a chunk: 16 KB

// last-bulk's sum, in every consumer thread of the last arriver (after split_k_last): the S
// partials of the tile chunk by chunk, split by split (step = chunk * S + split), each chunk of
// each partial one bulk copy into the ring; acc = partial 0, then += 1..S-1 (sum_partials' order,
// so the same bits). Thread 0 issues the copies and refills a stage once all 256 threads have
// read it (`empty`); `full` counts its bytes.
template <int R>
__device__ __forceinline__ void sum_partials_bulk(float (&acc)[R], const float* tile_ws, int splits, int ct,
                                                  uint32_t ring, uint32_t full, uint32_t empty) {
  constexpr int kQ = R / 4;
  constexpr int kRows = kQ < kBulkRows ? kQ : kBulkRows;
  static_assert(kQ % kRows == 0, "whole chunks");
  constexpr int kChunks = kQ / kRows;
  constexpr uint32_t kBytes = kRows * kConsumerThreads * 16;
  const int steps = kChunks * splits;
  const char* src = reinterpret_cast<const char*>(tile_ws);
  const size_t split_bytes = size_t(kConsumerThreads) * R * 4;
  auto issue = [&](int step) {  // thread 0
    const int st = step % kBulkStages, c = step / splits, sp = step % splits;
    ptx::mbar_arrive_expect_tx(full + 8 * st, kBytes);
    ptx::bulk_copy(ring + st * kBytes, src + sp * split_bytes + size_t(c) * kBytes, kBytes, full + 8 * st);
  };
  if (ct == 0) {
    // The partials were written by other SMs' generic stores and published by their release
    // atomics, acquired by this thread's atomic: order those reads before the async proxy's.
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
    for (int step = 0; step < steps && step < kBulkStages; ++step) issue(step);
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    for (int sp = 0; sp < splits; ++sp) {
      const int step = c * splits + sp, st = step % kBulkStages;
      const uint32_t use = uint32_t(step / kBulkStages) & 1u;
      ptx::mbar_wait(full + 8 * st, use);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float4 v = ld_shared_v4(ring + st * kBytes + (r * kConsumerThreads + ct) * 16);
        const int i = 4 * (c * kRows + r);
        if (sp == 0) {
          acc[i] = v.x; acc[i + 1] = v.y; acc[i + 2] = v.z; acc[i + 3] = v.w;
        } else {
          acc[i] += v.x; acc[i + 1] += v.y; acc[i + 2] += v.z; acc[i + 3] += v.w;
        }
      }
      ptx::mbar_arrive(empty + 8 * st);
      if (ct == 0 && step + kBulkStages < steps) {
        ptx::mbar_wait(empty + 8 * st, use);  // every thread has read this stage
        issue(step + kBulkStages);
      }
    }
  }
}

// out: [tiles][kQ * 256] float4 in fragment order (q * 256 + ct), as the partials.
template <int R, int P>
__global__ void __launch_bounds__(256, 1) bench_kernel(float* ws, int* counters, float* out, long long* cyc, int S) {
  constexpr int kQ = R / 4;
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ uint64_t bars[2];
  __shared__ uint64_t ring_bars[2 * kBulkStages];  // last-bulk: full[8], empty[8]
  const int ct = threadIdx.x;
  const uint32_t xbar = ptx::smem_u32(&bars[0]), dbar = ptx::smem_u32(&bars[1]);
  const uint32_t region = ptx::smem_u32(smem);
  const uint32_t full = ptx::smem_u32(&ring_bars[0]), empty = ptx::smem_u32(&ring_bars[kBulkStages]);
  if constexpr (P == kLastBulk) {
    if (ct == 0) {
      for (int st = 0; st < kBulkStages; ++st) {
        ptx::mbar_init(full + 8 * st, 1);
        ptx::mbar_init(empty + 8 * st, 256);
      }
      ptx::fence_proxy_async_smem();  // the barriers visible to the bulk copies
    }
  }
  int rank = 0;
  if constexpr (P == kCluster || P == kDsmem) {
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    if (ct == 0) {
      ptx::mbar_init(xbar, S);
      ptx::mbar_init(dbar, S);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    cluster_sync_all();  // no remote arrive before every CTA's barriers exist
  } else {
    rank = blockIdx.x % S;
  }
  const int tile = blockIdx.x / S;
  float acc[R];
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = value(blockIdx.x, i, ct);
  __syncthreads();
  const long long t0 = clock64();
  float4* o = reinterpret_cast<float4*>(out) + size_t(tile) * kQ * 256;
  const int T = kQ * 256, lo = rank * T / S, hi = (rank + 1) * T / S;  // this split's slice
  float* tws = ws + size_t(tile) * S * (256 * R);
  if constexpr (P == kNone) {
    float4* mine = reinterpret_cast<float4*>(out) + size_t(blockIdx.x) * kQ * 256;
#pragma unroll
    for (int q = 0; q < kQ; ++q)
      __stcg(mine + q * 256 + ct, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
  } else if constexpr (P == kLastBulk) {
    auto a = [&](int i) -> float& { return acc[i]; };
    store_partial<R>(a, tws, rank, ct);
    ptx::named_bar_sync(1, kConsumerThreads);
    if (split_k_last<false, SplitKBroadcast::BarrierOr>(counters + tile, nullptr, S, ct)) {
      sum_partials_bulk<R>(acc, tws, S, ct, region, full, empty);
#pragma unroll
      for (int q = 0; q < kQ; ++q)
        __stcg(o + q * 256 + ct, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    }
  } else if constexpr (is_last(P)) {
    auto a = [&](int i) -> float& { return acc[i]; };
    constexpr Fence kF = P == kLast ? Fence::EachSc : P == kLastAcqRel ? Fence::EachAcqRel : Fence::OneAtomic;
    if (reduce_variant<R, kF, P != kLastOneOwn>(a, tws, rank, S, counters + tile, ct)) {
#pragma unroll
      for (int q = 0; q < kQ; ++q)
        __stcg(o + q * 256 + ct, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    }
  } else {
    // store the partial: global (spin, cluster) or this CTA's shared memory (dsmem)
    float4* mine = reinterpret_cast<float4*>(tws + size_t(rank) * (256 * R));
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const float4 v = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
      if constexpr (P == kDsmem) st_shared_v4(region + (q * 256 + ct) * 16, v);
      else __stcg(mine + q * 256 + ct, v);
    }
    if constexpr (P != kDsmem) __threadfence();
    ptx::named_bar_sync(1, 256);
    if constexpr (P == kSpin) {
      if (ct == 0) {
        atomicAdd(counters + tile, 1);
        while (ld_acquire(counters + tile) < S) __nanosleep(32);
      }
      ptx::named_bar_sync(1, 256);
      __threadfence();
    } else {
      if (ct < S) remote_arrive(mapa(xbar, ct));
      wait_cluster(xbar, 0);
    }
    const float4* src = reinterpret_cast<const float4*>(tws);
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      const int idx = q * 256 + ct;
      if (idx < lo || idx >= hi) continue;
      float4 v;
      if constexpr (P == kDsmem) {
        v = ld_cluster_v4(mapa(region + idx * 16, 0));
        for (int s = 1; s < S; ++s) {
          const float4 w = ld_cluster_v4(mapa(region + idx * 16, s));
          v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w;
        }
      } else {
        v = __ldcg(src + idx);
        for (int s = 1; s < S; ++s) {
          const float4 w = __ldcg(src + size_t(s) * (256 * R / 4) + idx);
          v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w;
        }
      }
      __stcg(o + idx, v);
    }
    if constexpr (P == kSpin) {
      if (ct == 0 && atomicAdd(counters + tile, 1) == 2 * S - 1) counters[tile] = 0;
    } else if constexpr (P == kDsmem) {
      ptx::named_bar_sync(1, 256);  // this CTA's reads of the others are done
      if (ct < S) remote_arrive(mapa(dbar, ct));
      wait_cluster(dbar, 0);  // the others' reads of this CTA's shared memory are done
    }
  }
  const long long t1 = clock64();
  if (ct == 0) cyc[blockIdx.x] = t1 - t0;
}

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

struct Buffers {
  float* ws;
  int* counters;
  float* out;
  long long* cyc;
};

template <int R, int P>
bool run(const Buffers& b, int S, int launches, double& us, long long& med, long long& mx) {
  auto k = bench_kernel<R, P>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  if (P == kCluster || P == kDsmem) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(kCtas);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = kSmem;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(S);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  if (P == kCluster || P == kDsmem) {
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  constexpr int kQ = R / 4;
  const int tiles = P == kNone ? kCtas : kCtas / S;
  std::vector<float> host(size_t(tiles) * kQ * 256 * 4);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> times;
  std::vector<long long> cyc(kCtas), cycs;
  bool ok = true;
  for (int it = 0; it < launches + 3; ++it) {
    CHECK(cudaMemset(b.out, 0xFF, host.size() * sizeof(float)));  // poisoned: NaN
    CHECK(cudaEventRecord(e0));
    CHECK(cudaLaunchKernelEx(&cfg, k, b.ws, b.counters, b.out, b.cyc, S));
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    CHECK(cudaMemcpy(cyc.data(), b.cyc, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    if (it < 3) continue;
    times.push_back(t * 1000.0f);
    if (is_last(P)) {  // the protocol's span is the last arriver's: the largest of each tile
      for (int t0 = 0; t0 < kCtas; t0 += S) cycs.push_back(*std::max_element(cyc.begin() + t0, cyc.begin() + t0 + S));
    } else {
      cycs.insert(cycs.end(), cyc.begin(), cyc.end());
    }
    if (it == launches + 2) {  // check the last launch's output bit for bit
      CHECK(cudaMemcpy(host.data(), b.out, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (int tile = 0; tile < tiles && ok; ++tile)
        for (int ct = 0; ct < 256 && ok; ++ct)
          for (int i = 0; i < R; ++i) {
            const int ss = P == kNone ? 1 : S;
            float want = value(tile * ss, i, ct);
            for (int s = 1; s < ss; ++s) want += value(tile * ss + s, i, ct);
            const float got = host[(size_t(tile) * kQ * 256 + (i / 4) * 256 + ct) * 4 + i % 4];
            if (std::memcmp(&got, &want, 4) != 0) {
              std::printf("  MISMATCH %s R=%d S=%d tile %d thread %d acc %d: %g, want %g\n", kNames[P], R, S, tile,
                          ct, i, got, want);
              ok = false;
              break;
            }
          }
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(cycs.begin(), cycs.end());
  us = times[times.size() / 2];
  med = cycs[cycs.size() / 2];
  mx = cycs.back();
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return ok;
}

template <int R>
bool row(const Buffers& b, int launches) {
  bool ok = true;
  double base_us;
  long long bm, bx;
  ok &= run<R, kNone>(b, 1, launches, base_us, bm, bx);
  for (int S : {2, 4, 8}) {
    std::printf("R=%3d (%3d KB partial) S=%d | none %6.2f us (%5lld cyc)", R, R, S, base_us, bm);
    double us;
    long long m, x;
    const auto one = [&](auto proto) {
      ok &= run<R, decltype(proto)::value>(b, S, launches, us, m, x);
      std::printf(" | %s %6.2f us %6lld/%6lld", kNames[decltype(proto)::value], us, m, x);
    };
    one(std::integral_constant<int, kLast>{});
    one(std::integral_constant<int, kLastAcqRel>{});
    one(std::integral_constant<int, kLastOne>{});
    one(std::integral_constant<int, kLastOneOwn>{});
    one(std::integral_constant<int, kLastBulk>{});
    one(std::integral_constant<int, kSpin>{});
    one(std::integral_constant<int, kCluster>{});
    one(std::integral_constant<int, kDsmem>{});
    std::printf("\n");
  }
  return ok;
}

}  // namespace nvfp4::sm90::splitkbench

// How many clusters of S CTAs of a kernel like the fused one (384 threads, 227 KB of shared
// memory, one CTA per SM) the device holds at once.
__global__ void __launch_bounds__(384, 1) occupancy_probe() {}

int main(int argc, char** argv) {
  using namespace nvfp4::sm90::splitkbench;
  const int launches = argc > 1 ? std::atoi(argv[1]) : 40;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; per-CTA cycles: median/largest (last: each tile's last arriver)\n", prop.name,
              prop.multiProcessorCount);
  CHECK(cudaFuncSetAttribute(occupancy_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  CHECK(cudaFuncSetAttribute(occupancy_probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("clusters resident at 384 threads, 227 KB:");
  for (int S = 1; S <= 16; ++S) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(S * 64));
    cfg.blockDim = dim3(384);
    cfg.dynamicSmemBytes = 227 * 1024;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = unsigned(S);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = -1;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, occupancy_probe, &cfg);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      std::printf(" S=%d: %s", S, cudaGetErrorString(e));
    } else {
      std::printf(" S=%d: %d (%d CTAs)", S, n, n * S);
    }
  }
  std::printf("\n");
  Buffers b;
  CHECK(cudaMalloc(&b.ws, size_t(kCtas) * 256 * 128 * sizeof(float)));
  CHECK(cudaMalloc(&b.counters, kCtas * sizeof(int)));
  CHECK(cudaMemset(b.counters, 0, kCtas * sizeof(int)));
  CHECK(cudaMalloc(&b.out, size_t(kCtas) * 256 * 128 * sizeof(float)));
  CHECK(cudaMalloc(&b.cyc, kCtas * sizeof(long long)));
  bool ok = true;
  ok &= row<8>(b, launches);
  ok &= row<32>(b, launches);
  ok &= row<64>(b, launches);
  ok &= row<128>(b, launches);
  std::printf("%s\n", ok ? "all outputs bit-identical to the host's split-order sums" : "MISMATCHES");
  return ok ? 0 : 1;
}
