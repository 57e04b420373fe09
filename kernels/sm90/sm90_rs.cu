// v3 kernel (sm90_rs.cuh): launch helpers and the two M-tile instantiations.
#include "src/device/cuda_check.hpp"
#include "kernels/sm90/sm90_rs.cuh"

namespace nvfp4::sm90::v3 {
namespace {
template <int MT, int kDiag, int kSG, int kBufs>
void set_smem_attribute() {
  static const bool done = [] {
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(rs_kernel<MT, kDiag, kSG, kBufs>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(Cfg<MT>::kSmem)));
    return true;
  }();
  (void)done;
}
}  // namespace

// Persistent: `grid` CTAs walk the units. PDL after the A prepass: the producer waits with
// griddepcontrol.wait before its first read of a16 (as do the split-K counters), while the
// consumers already start loading raw B.
template <int MT, int kDiag, int kSG, int kBufs>
void launch_rs(const Params& p, int grid, cudaStream_t stream) {
  set_smem_attribute<MT, kDiag, kSG, kBufs>();
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
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, rs_kernel<MT, kDiag, kSG, kBufs>, p));
  NVFP4_CUDA_CHECK_LAUNCH();
}

// CTAs resident at once on the current device (0 when it cannot be queried).
template <int MT>
int resident_ctas() {
  static int cached = -2;
  if (cached != -2) return cached > 0 ? cached : 0;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaFuncSetAttribute(rs_kernel<MT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(Cfg<MT>::kSmem)) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rs_kernel<MT>, kThreads,
                                                    Cfg<MT>::kSmem) != cudaSuccess) {
    (void)cudaGetLastError();
    cached = -1;
    return 0;
  }
  cached = sms * per_sm;
  return cached > 0 ? cached : 0;
}

template void launch_rs<128>(const Params&, int, cudaStream_t);
template void launch_rs<128, 0, 4, 3>(const Params&, int, cudaStream_t);  // deeper raw-B lookahead
template void launch_rs<128, 0, 1>(const Params&, int, cudaStream_t);  // K % 256 != 0
template void launch_rs<256, 0, 1>(const Params&, int, cudaStream_t);
template void launch_rs<128, 1>(const Params&, int, cudaStream_t);  // bench diagnostics
template void launch_rs<128, 2>(const Params&, int, cudaStream_t);
template void launch_rs<128, 3>(const Params&, int, cudaStream_t);
template void launch_rs<128, 7>(const Params&, int, cudaStream_t);
template void launch_rs<256, 7>(const Params&, int, cudaStream_t);
template void launch_rs<256>(const Params&, int, cudaStream_t);
template int resident_ctas<128>();
template int resident_ctas<256>();
}  // namespace nvfp4::sm90::v3
