// v2 (warp-specialised) kernel, tile width 192: both A modes. One width per translation unit so
// the kernels compile in parallel.
#include "kernels/sm90/sm90_ws_launch.cuh"

namespace nvfp4::sm90::v2 {
template void launch_ws<192, 0>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<192, 1>(const Params&, dim3, bool, cudaStream_t);
template int max_active_clusters<192, 0>(int);
template int max_active_clusters<192, 1>(int);
// Two producer warpgroups (512 threads).
template void launch_ws<192, 0, 0, 2>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<192, 1, 0, 2>(const Params&, dim3, bool, cudaStream_t);
}  // namespace nvfp4::sm90::v2
