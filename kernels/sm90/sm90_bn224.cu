// One tile width per translation unit so the four kernels compile in parallel.
#include "src/device/cuda_check.hpp"
#include "kernels/sm90/sm90_kernel.cuh"

namespace nvfp4::sm90 {

template <>
void launch_bn<224>(const Params& p, dim3 grid, cudaStream_t stream) {
  constexpr size_t smem = smem_bytes<224>();
  NVFP4_CUDA_CHECK(cudaFuncSetAttribute(gemm_kernel<224>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  gemm_kernel<224><<<grid, kThreads, smem, stream>>>(p);
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4::sm90
