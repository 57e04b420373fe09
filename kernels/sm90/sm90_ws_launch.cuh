// Launch helpers of the v2 kernel, included by the per-width translation units only.
#pragma once

#include "src/device/cuda_check.hpp"
#include "kernels/sm90/sm90_ws.cuh"

namespace nvfp4::sm90::v2 {

template <int BN, int kAMode, int kDiag = 0, int NP = 1>
void set_smem_attribute() {
  static const bool done = [] {
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(ws_kernel<BN, kAMode, kDiag, NP>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(Cfg<BN, kAMode>::kSmem)));
    return true;
  }();
  (void)done;
}

// grid.y = split: the split CTAs of one tile form a cluster (1, split, 1) for the reduction.
// pdl: programmatic dependent launch after the A prepass (the kernel waits with
// griddepcontrol.wait before its first read of the decoded A).
template <int BN, int kAMode, int kDiag, int NP>
void launch_ws(const Params& p, dim3 grid, bool pdl, cudaStream_t stream) {
  set_smem_attribute<BN, kAMode, kDiag, NP>();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(threads_for<NP>(), 1, 1);
  cfg.dynamicSmemBytes = Cfg<BN, kAMode>::kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[2];
  unsigned n = 0;
  if (p.split > 1) {
    attrs[n].id = cudaLaunchAttributeClusterDimension;
    attrs[n].val.clusterDim.x = 1;
    attrs[n].val.clusterDim.y = static_cast<unsigned>(p.split);
    attrs[n].val.clusterDim.z = 1;
    ++n;
  }
  if (pdl) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, ws_kernel<BN, kAMode, kDiag, NP>, p));
  NVFP4_CUDA_CHECK_LAUNCH();
}

// How many clusters of `split` CTAs can be resident at once (0 when it cannot be queried).
// Queried once per split and cached (the heuristic asks for every candidate).
template <int BN, int kAMode>
int max_active_clusters(int split) {
  static int cache[kMaxSplit + 1] = {};
  if (split < 1 || split > kMaxSplit) return 0;
  if (cache[split] != 0) return cache[split] > 0 ? cache[split] : 0;
  if (cudaFuncSetAttribute(ws_kernel<BN, kAMode>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(Cfg<BN, kAMode>::kSmem)) != cudaSuccess) {
    (void)cudaGetLastError();
    cache[split] = -1;
    return 0;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(split), static_cast<unsigned>(split), 1);
  cfg.blockDim = dim3(threads_for<1>(), 1, 1);
  cfg.dynamicSmemBytes = Cfg<BN, kAMode>::kSmem;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 1;
  attr.val.clusterDim.y = static_cast<unsigned>(split);
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, ws_kernel<BN, kAMode>, &cfg) != cudaSuccess ||
      clusters <= 0) {
    (void)cudaGetLastError();
    cache[split] = -1;
    return 0;
  }
  cache[split] = clusters;
  return clusters;
}

}  // namespace nvfp4::sm90::v2
