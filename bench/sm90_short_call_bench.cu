// The model test for a short-call structure of the sm90 streaming path (issue 47; bench/notes-sm90-stream.md,
// "What the targets need"): at the short M = 16 shapes the path spends 15-16 us beyond its bytes, most of
// it in the grid-wide structure (cooperative launch, the grid barrier, the final sums). The structure
// modelled here has none of them: a cluster of C CTAs owns a panel of B rows over the whole K, each CTA
// streams 1/C of K, and the cluster sums its C partials through distributed shared memory behind one
// cluster barrier. No decode and no mma: the loads (A's slice and B's codes and scales) are kept live
// by folding them into the partial, so the time is the structure's floor, to be set beside the path's
// full time in the same call. The same panels also run as a cooperative grid whose partials meet in a
// global workspace behind a grid barrier (the path's structure today), so the two structures are
// compared on the same loads. (Scales are read in 16-byte runs, the last run of a slice dropped where
// K / 256 is not a multiple of C: at most 1/9 of the bytes, at K = 512.)
//
// Times are event windows with L2 flushed before each call and the stream held until the launch
// is enqueued, as the tool times (so they compare with its medians).
//
// Usage: sm90_short_call_bench M N K [reps]   (M <= 16; prints the floors, then per C both structures' time
// and whether they left the same C; exit 1 where they did not)
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "src/device/cuda_check.hpp"
#include "src/measure/measure.hpp"
#include "src/measure/stream_hold.hpp"

namespace cg = cooperative_groups;


constexpr int kThreads = 512;  // 16 warps, as the path runs
constexpr int kM = 16;

struct Problem {
  const uint4* b;       // N rows x K/2 bytes of codes
  const uint4* sb;      // N rows x K/16 scale bytes
  const uint4* a;       // kM rows x K/2 bytes of codes
  float* c;             // kM x N
  float* work;          // the grid form's partials: one kM x rows block per CTA
  int n, k, rows;       // rows: B rows a panel holds
};

// CTA q of a panel's C reads rows [r0, r0 + rows) of B over K slice q of C and A's slice, every load
// issued before any is used (8 in flight a thread), each folded into the kM x rows partial by a
// shared atomic. Then the panel's C partials are summed, CTA q summing share q of the outputs in
// rank order: through distributed shared memory behind a cluster barrier (kCluster), or through a
// global workspace behind a grid barrier (a cooperative launch, the path's structure today).
template <int C, bool kCluster>
__global__ void __launch_bounds__(kThreads, 1) panel_kernel(Problem p) {
  extern __shared__ float part[];  // kM x rows partial, then A's slice
  const int rank = kCluster ? static_cast<int>(cg::this_cluster().block_rank()) : static_cast<int>(blockIdx.x % C);
  const int panel = blockIdx.x / C;
  const int r0 = panel * p.rows;
  const int rows = min(p.rows, p.n - r0);
  const int row_chunks = p.k / 2 / 16, slice = row_chunks / C, k0 = rank * slice;  // 16-byte chunks
  const int srow_chunks = p.k / 16 / 16, sslice = srow_chunks / C;                   // may be 0 (K < 256 C)
  uint4* slab = reinterpret_cast<uint4*>(part + kM * p.rows);
  for (int i = threadIdx.x; i < kM * p.rows; i += kThreads) part[i] = 0.f;
  __syncthreads();
  const int nb = rows * slice, ns = rows * sslice, na = kM * slice, total = nb + ns + na;
  for (int i0 = threadIdx.x; i0 < total; i0 += 8 * kThreads) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int i = i0 + u * kThreads;
      v[u] = make_uint4(0, 0, 0, 0);
      if (i < nb) {
        v[u] = p.b[static_cast<size_t>(r0 + i / slice) * row_chunks + k0 + i % slice];
      } else if (i < nb + ns) {
        const int j = i - nb;
        v[u] = p.sb[static_cast<size_t>(r0 + j / sslice) * srow_chunks + rank * sslice + j % sslice];
      } else if (i < total) {
        const int j = i - nb - ns;
        v[u] = p.a[static_cast<size_t>(j / slice) * row_chunks + k0 + j % slice];
      }
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int i = i0 + u * kThreads;
      if (i < nb + ns) {
        const int row = i < nb ? i / slice : (i - nb) / sslice;
        atomicAdd(&part[(i % kM) * p.rows + row], static_cast<float>((v[u].x ^ v[u].y ^ v[u].z ^ v[u].w) & 0xff));
      } else if (i < total) {
        slab[i - nb - ns] = v[u];
      }
    }
  }
  const int outs = kM * p.rows, share = (outs + C - 1) / C;
  const int lo = rank * share, hi = min(outs, (rank + 1) * share);
  if constexpr (kCluster) {
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < C; ++q) s += cluster.map_shared_rank(part, q)[i];
      const int m = i / p.rows, r = i % p.rows;
      if (r < rows) p.c[m * p.n + r0 + r] = s + slab[0].x * 0.f;
    }
    cluster.sync();  // no CTA leaves while another still reads its shared memory
  } else {
    __syncthreads();
    float* mine = p.work + static_cast<size_t>(blockIdx.x) * outs;
    for (int i = threadIdx.x; i < outs; i += kThreads) mine[i] = part[i];
    cg::this_grid().sync();
    const float* first = p.work + static_cast<size_t>(panel) * C * outs;
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < C; ++q) s += __ldcg(first + static_cast<size_t>(q) * outs + i);
      const int m = i / p.rows, r = i % p.rows;
      if (r < rows) p.c[m * p.n + r0 + r] = s + slab[0].x * 0.f;
    }
  }
}

__global__ void empty_kernel() {}
__global__ void grid_barrier_kernel() { cg::this_grid().sync(); }

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int bench_main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M N K [reps]\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 50;
  if (m < 1 || m > kM || n < 1 || k % 512 != 0) {
    std::fprintf(stderr, "M must be 1..16, N >= 1, K a multiple of 512 (got %d %d %d)\n", m, n, k);
    return 2;
  }
  cudaDeviceProp prop{};
  NVFP4_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t b_bytes = static_cast<size_t>(n) * k / 2, sb_bytes = static_cast<size_t>(n) * k / 16;
  uint4 *b, *a;
  uint4* sb;
  bool bad = false;
  float* c;
  NVFP4_CUDA_CHECK(cudaMalloc(&b, b_bytes));
  NVFP4_CUDA_CHECK(cudaMalloc(&sb, sb_bytes));
  NVFP4_CUDA_CHECK(cudaMalloc(&a, static_cast<size_t>(kM) * k / 2));
  NVFP4_CUDA_CHECK(cudaMalloc(&c, static_cast<size_t>(kM) * n * 4));
  NVFP4_CUDA_CHECK(cudaMemset(b, 0x35, b_bytes));
  NVFP4_CUDA_CHECK(cudaMemset(sb, 0x38, sb_bytes));
  NVFP4_CUDA_CHECK(cudaMemset(a, 0x21, static_cast<size_t>(kM) * k / 2));
  cudaEvent_t e0, e1;
  NVFP4_CUDA_CHECK(cudaEventCreate(&e0));
  NVFP4_CUDA_CHECK(cudaEventCreate(&e1));
  // The tool's own flush and stream hold (src/measure), so the windows compare with its medians.
  nvfp4::L2Flusher flusher(static_cast<size_t>(prop.l2CacheSize), 0);
  nvfp4::StreamHold hold(0);
  auto time_it = [&](auto&& launch, bool held = true) {
    std::vector<float> t;
    for (int i = 0; i < reps + 2; ++i) {
      flusher.flush(nullptr);
      if (held) hold.hold(nullptr);
      NVFP4_CUDA_CHECK(cudaEventRecord(e0));
      launch();
      NVFP4_CUDA_CHECK(cudaEventRecord(e1));
      if (held) hold.release();
      NVFP4_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      NVFP4_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 2) t.push_back(ms * 1000.f);
    }
    return median(t);
  };
  std::printf("%dx%dx%d, %d SMs, B %.2f MB, reps %d, L2 flushed before each call\n", m, n, k,
              prop.multiProcessorCount, (b_bytes + sb_bytes) / 1e6, reps);
  const auto empty = [] {
    empty_kernel<<<1, 32>>>();
    NVFP4_CUDA_CHECK(cudaGetLastError());
  };
  std::printf("floor: empty launch %.2f us held (the tool's stream hold; every time below is held), "
              "%.2f us not held\n", time_it(empty), time_it(empty, false));
  {
    int sms = prop.multiProcessorCount;
    void* args[] = {};
    std::printf("floor: cooperative launch, %d x %d threads, one grid barrier %.2f us\n", sms, kThreads,
                time_it([&] {
                  NVFP4_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_barrier_kernel), dim3(sms),
                                                 dim3(kThreads), args, 0, nullptr));
                }));
  }
  float* work;
  NVFP4_CUDA_CHECK(cudaMalloc(&work, static_cast<size_t>(prop.multiProcessorCount) * kM * n * 4 + (1 << 20)));
  std::vector<float> c_cluster(static_cast<size_t>(kM) * n), c_grid(c_cluster.size());
  // Per C: rows a panel, the fewest multiple of 8 for which every cluster is resident at once, then
  // the same panels as a cooperative grid. Both must leave the same C (exact: integer partials).
  auto run = [&](auto cluster_kernel, auto grid_kernel, int cs) {
    if ((k / 32) % cs != 0) return;
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    for (auto kern : {cluster_kernel, grid_kernel})
      NVFP4_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cs;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.blockDim = dim3(kThreads);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    for (int rows = 8;; rows += 8) {
      const int panels = (n + rows - 1) / rows;
      cfg.gridDim = dim3(panels * cs);
      cfg.dynamicSmemBytes = kM * rows * 4 + kM * (k / 32 / cs) * 16;
      if (cfg.dynamicSmemBytes > 200 * 1024) {
        std::printf("C %2d: no rows fit\n", cs);
        return;
      }
      int max_clusters = 0;
      NVFP4_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, cluster_kernel, &cfg));
      if (panels > max_clusters || panels * cs > prop.multiProcessorCount) continue;
      Problem p{b, sb, a, c, work, n, k, rows};
      NVFP4_CUDA_CHECK(cudaMemset(c, 0, c_cluster.size() * 4));
      const float t_cluster = time_it([&] { NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, cluster_kernel, p)); });
      NVFP4_CUDA_CHECK(cudaMemcpy(c_cluster.data(), c, c_cluster.size() * 4, cudaMemcpyDeviceToHost));
      cudaLaunchConfig_t gcfg = cfg;
      cudaLaunchAttribute coop{};
      coop.id = cudaLaunchAttributeCooperative;
      coop.val.cooperative = 1;
      gcfg.attrs = &coop;
      NVFP4_CUDA_CHECK(cudaMemset(c, 0, c_grid.size() * 4));
      const float t_grid = time_it([&] { NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&gcfg, grid_kernel, p)); });
      NVFP4_CUDA_CHECK(cudaMemcpy(c_grid.data(), c, c_grid.size() * 4, cudaMemcpyDeviceToHost));
      const bool same = c_cluster == c_grid;
      std::printf("C %2d: %3d panels of %4d rows, %3d CTAs (%2d clusters resident at most): cluster + DSMEM %6.2f us, "
                  "cooperative + grid barrier + global %6.2f us, same C %s\n",
                  cs, panels, rows, panels * cs, max_clusters, t_cluster, t_grid, same ? "yes" : "NO");
      if (!same) bad = true;
      return;
    }
  };
  run(panel_kernel<1, true>, panel_kernel<1, false>, 1);
  run(panel_kernel<2, true>, panel_kernel<2, false>, 2);
  run(panel_kernel<4, true>, panel_kernel<4, false>, 4);
  run(panel_kernel<8, true>, panel_kernel<8, false>, 8);
  run(panel_kernel<16, true>, panel_kernel<16, false>, 16);
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  return bad ? 1 : 0;
}

int main(int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {  // a failed CUDA call (NVFP4_CUDA_CHECK)
    std::fprintf(stderr, "sm90_short_call_bench: %s\n", e.what());
    return 2;
  }
}
