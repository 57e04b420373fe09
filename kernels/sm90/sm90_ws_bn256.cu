// v2 (warp-specialised) kernel, tile width 256: both A modes. One width per translation unit so
// the kernels compile in parallel.
#include "kernels/sm90/sm90_ws_launch.cuh"

namespace nvfp4::sm90::v2 {
template void launch_ws<256, 0>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<256, 1>(const Params&, dim3, bool, cudaStream_t);
template int max_active_clusters<256, 0>(int);
template int max_active_clusters<256, 1>(int);
// Bench-only diagnostics (sm90_ws.cuh, kDiag).
template void launch_ws<256, 0, 1>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<256, 0, 2>(const Params&, dim3, bool, cudaStream_t);
template void launch_ws<256, 0, 4>(const Params&, dim3, bool, cudaStream_t);
}  // namespace nvfp4::sm90::v2
