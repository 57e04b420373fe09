// One tile width per translation unit so the four kernels compile in parallel.
#include "src/device/cuda_check.hpp"
#include "kernels/sm90/sm90_kernel.cuh"

namespace nvfp4::sm90 {

template <>
void launch_bn<256>(const Params& p, dim3 grid, cudaStream_t stream) {
  constexpr size_t smem = smem_bytes<256>();
  NVFP4_CUDA_CHECK(cudaFuncSetAttribute(gemm_kernel<256>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  gemm_kernel<256><<<grid, kThreads, smem, stream>>>(p);
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4::sm90

namespace nvfp4::sm90 {

void launch_diag(const Params& p, dim3 grid, cudaStream_t stream, int diag) {
  constexpr size_t smem = smem_bytes<256>();
  auto kern = diag == 1 ? gemm_kernel<256, 1> : gemm_kernel<256, 2>;
  NVFP4_CUDA_CHECK(
      cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kern<<<grid, kThreads, smem, stream>>>(p);
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4::sm90
