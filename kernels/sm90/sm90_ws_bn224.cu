// v2 (warp-specialised) kernel, tile width 224: both A modes. One width per translation unit so
// the kernels compile in parallel.
#include "kernels/sm90/sm90_ws_launch.cuh"

namespace nvfp4::sm90::v2 {
template void launch_ws<224, 0>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<224, 1>(const Params&, dim3, bool, cudaStream_t);
template int max_active_clusters<224, 0>(int);
template int max_active_clusters<224, 1>(int);
}  // namespace nvfp4::sm90::v2
