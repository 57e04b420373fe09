// The model test for a short-call structure of the sm90 streaming path (issue 47; bench/notes-sm90-stream.md,
// "What the targets need"): at the short M = 16 shapes the path spends 15-16 us beyond its bytes, most of
// it in the grid-wide structure (cooperative launch, the grid barrier, the final sums). The structure
// modelled here has none of them: a cluster of C CTAs owns a panel of B rows over the whole K, each CTA
// streams 1/C of K, and the cluster sums its C partials through distributed shared memory behind one
// cluster barrier. No decode and no mma: the loads (A's slice and B's codes and scales) are kept live
// by folding them into the partial, so the time is the structure's floor, to be set beside the path's
// full time in the same call.
//
// Usage: sm90_short_call_bench M N K [reps]   (M <= 16; prints one line per cluster size and the floors)
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

constexpr int kThreads = 512;  // 16 warps, as the path runs
constexpr int kM = 16;

struct Problem {
  const uint4* b;       // N rows x K/2 bytes of codes
  const uint32_t* sb;   // N rows x K/16 scale bytes
  const uint4* a;       // kM rows x K/2 bytes of codes
  float* c;             // kM x N
  int n, k, rows;       // rows: B rows a cluster owns
};

// One CTA: rows [r0, r0 + rows) of B over K slice [k0, k1) (in bytes of codes: k/2).
template <int C>
__global__ void __launch_bounds__(kThreads, 1) cluster_kernel(Problem p) {
  extern __shared__ float part[];  // kM x rows partial, then the A slice's staging
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int panel = blockIdx.x / C;
  const int r0 = panel * p.rows;
  const int rows = min(p.rows, p.n - r0);
  const int row_bytes = p.k / 2;
  const int slice = row_bytes / C;  // a multiple of 16 (K a multiple of 32 * C)
  const int k0 = rank * slice;
  // A's slice: kM rows x slice bytes, read once per CTA into shared memory (the slab's traffic).
  uint32_t* slab = reinterpret_cast<uint32_t*>(part + kM * p.rows);
  for (int i = threadIdx.x; i < kM * slice / 16; i += kThreads) {
    const int m = i / (slice / 16), j = i % (slice / 16);
    const uint4 v = p.a[(m * row_bytes + k0) / 16 + j];
    slab[i] = v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int i = threadIdx.x; i < kM * p.rows; i += kThreads) part[i] = 0.f;
  __syncthreads();
  // B: each warp takes rows in turn; lanes read 16 B each along the row's slice (coalesced).
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = warp; r < rows; r += kThreads / 32) {
    const uint4* row = p.b + (static_cast<size_t>(r0 + r) * row_bytes + k0) / 16;
    const uint32_t* srow = p.sb + (static_cast<size_t>(r0 + r) * (p.k / 16) + k0 / 8) / 4;
    uint32_t acc = 0;
    for (int j = lane; j < slice / 16; j += 32) {
      const uint4 v = row[j];
      acc += v.x ^ v.y ^ v.z ^ v.w ^ slab[(lane % kM) * (slice / 16) + j];
    }
    for (int j = lane; j < slice / 32; j += 32) acc += srow[j];
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(~0u, acc, o);
    if (lane < kM) part[lane * p.rows + r] = static_cast<float>(acc & 0xffff);
  }
  cluster.sync();
  // Rank q sums its share of the panel's kM x rows outputs over the C partials, in rank order.
  const int total = kM * p.rows, share = (total + C - 1) / C;
  for (int i = rank * share + threadIdx.x; i < min(total, (rank + 1) * share); i += kThreads) {
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < C; ++q) s += cluster.map_shared_rank(part, q)[i];
    const int m = i / p.rows, r = i % p.rows;
    if (r < rows) p.c[m * p.n + r0 + r] = s;
  }
  cluster.sync();  // no CTA leaves while another still reads its shared memory
}

__global__ void empty_kernel() {}
__global__ void grid_barrier_kernel() { cg::this_grid().sync(); }

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
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
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t b_bytes = static_cast<size_t>(n) * k / 2, sb_bytes = static_cast<size_t>(n) * k / 16;
  uint4 *b, *a;
  uint32_t* sb;
  float* c;
  char* flush;
  const size_t flush_bytes = 2ull * prop.l2CacheSize;
  CK(cudaMalloc(&b, b_bytes));
  CK(cudaMalloc(&sb, sb_bytes));
  CK(cudaMalloc(&a, static_cast<size_t>(kM) * k / 2));
  CK(cudaMalloc(&c, static_cast<size_t>(kM) * n * 4));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(b, 0x35, b_bytes));
  CK(cudaMemset(sb, 0x38, sb_bytes));
  CK(cudaMemset(a, 0x21, static_cast<size_t>(kM) * k / 2));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time_it = [&](auto&& launch) {
    std::vector<float> t;
    for (int i = 0; i < reps + 2; ++i) {
      CK(cudaMemsetAsync(flush, i, flush_bytes));
      CK(cudaEventRecord(e0));
      launch();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 2) t.push_back(ms * 1000.f);
    }
    return median(t);
  };
  std::printf("%dx%dx%d, %d SMs, B %.2f MB, reps %d, L2 flushed before each call\n", m, n, k,
              prop.multiProcessorCount, (b_bytes + sb_bytes) / 1e6, reps);
  std::printf("floor: empty launch %.2f us\n", time_it([] { empty_kernel<<<1, 32>>>(); CK(cudaGetLastError()); }));
  {
    int sms = prop.multiProcessorCount;
    void* args[] = {};
    std::printf("floor: cooperative launch, %d x %d threads, one grid barrier %.2f us\n", sms, kThreads,
                time_it([&] {
                  CK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_barrier_kernel), dim3(sms),
                                                 dim3(kThreads), args, 0, nullptr));
                }));
  }
  auto run = [&](auto kernel, int cs) {
    if (k / 2 % (16 * cs) != 0) return;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cs;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.blockDim = dim3(kThreads);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    // Rows per cluster: the fewest multiple of 8 with every cluster resident at once.
    int max_clusters = 0;
    for (int rows = 8;; rows += 8) {
      const int panels = (n + rows - 1) / rows;
      cfg.gridDim = dim3(panels * cs);
      cfg.dynamicSmemBytes = (kM * rows + kM * (k / 2 / cs) / 16) * 4;
      if (cfg.dynamicSmemBytes > 200 * 1024) {
        std::printf("cluster %2d: no rows fit\n", cs);
        return;
      }
      CK(cudaOccupancyMaxActiveClusters(&max_clusters, kernel, &cfg));
      if (panels <= max_clusters) {
        Problem p{b, sb, a, c, n, k, rows};
        const float us = time_it([&] { CK(cudaLaunchKernelEx(&cfg, kernel, p)); });
        std::printf("cluster %2d: %d clusters resident at most, %d panels of %d rows, %d CTAs, %.2f us\n", cs,
                    max_clusters, panels, rows, panels * cs, us);
        return;
      }
    }
  };
  run(cluster_kernel<4>, 4);
  run(cluster_kernel<8>, 8);
  run(cluster_kernel<16>, 16);
  CK(cudaDeviceSynchronize());
  return 0;
}
