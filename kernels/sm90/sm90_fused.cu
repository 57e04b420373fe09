// The fused path v5 (sm90_fused.cuh): launch helper and the M-tile instantiations.
#include "kernels/sm90/sm90_fused.cuh"

#include "src/device/cuda_check.hpp"

namespace nvfp4::sm90::v5 {

// Persistent: `grid` CTAs (one per SM at most) walk the units. Launched with programmatic stream
// serialization after the A prepass, which triggers its dependents at its start: the producer
// waits (griddepcontrol.wait) before its first read of the prepass output.
template <int MT>
void launch_fused(const Params& p, const CUtensorMap& tmC, int grid, cudaStream_t stream) {
  static const bool attr_set = [] {
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(fused_kernel<MT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(Cfg<MT>::kSmem)));
    return true;
  }();
  (void)attr_set;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid), 1, 1);
  cfg.blockDim = dim3(kThreads, 1, 1);
  cfg.dynamicSmemBytes = Cfg<MT>::kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, fused_kernel<MT>, tmC, p));
  NVFP4_CUDA_CHECK_LAUNCH();
}

template void launch_fused<16>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<32>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<64>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<128>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<256>(const Params&, const CUtensorMap&, int, cudaStream_t);

}  // namespace nvfp4::sm90::v5
