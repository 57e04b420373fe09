// The streaming path's launcher (stream_kernel.cuh): the workspace (the pieces' partials,
// stream_layout()), one cooperative launch of one CTA per SM at most (its grid synchronises once,
// between the pieces and the final sums), no prepass.
#include <fmt/format.h>

#include <cstring>

#include "kernels/sm90/launch.hpp"
#include "kernels/sm90/stream_kernel.cuh"
#include "src/core/arith.hpp"
#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"

namespace nvfp4::sm90 {
namespace {

static_assert(stream::warps_for<1>() == stream_warps(8) && stream::warps_for<2>() == stream_warps(16) &&
                  stream::warps_for<4>() == stream_warps(32),
              "one warp count per M tile, config.hpp and the kernel");

// `stamps` set: the kernel's twin built with the time line (diagnosis only, stamps.hpp).
template <int NT>
void launch_kernel(const stream::Params& q, uint64_t* stamps, int ctas, size_t smem, cudaStream_t s, DeviceState& dev) {
  auto* kernel = stamps != nullptr ? stream::stream_kernel<NT, true> : stream::stream_kernel<NT, false>;
  dev.ensure_smem_limit(reinterpret_cast<const void*>(kernel), kStreamSmemLimit);  // once per kernel: the most any shape takes
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ctas), 1, 1);
  cfg.blockDim = dim3(stream::warps_for<NT>() * 32, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeCooperative;  // the grid synchronises once (all pieces stored)
  attr.val.cooperative = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, q, stamps));
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_stream(const Shape& s, const Operands& ops, const StreamConfig& c, void* workspace,
                   cudaStream_t stream, DeviceState& dev) {
  const StreamLayout w = stream_layout(s, c);
  if (const std::string e = stream_shape_error(s, c, &w); !e.empty()) throw usage_error("sm90: " + e);
  if (c.ctas > dev.sm_count())
    throw usage_error(fmt::format("sm90: stream ctas {} is more than the {} SMs (one CTA an SM, all resident)",
                                  c.ctas, dev.sm_count()));
  stream::Params q{};
  q.a = ops.a;
  q.sfa = ops.sfa;
  q.b = ops.b;
  q.sfb = ops.sfb;
  q.c = ops.c;
  q.partial = static_cast<float*>(workspace);
  q.plan = stream_plan(s, c, w);
  q.m = static_cast<int>(s.m);
  q.n = static_cast<int>(s.n);
  q.slab_slices = w.slab_slices;
  q.kbytes = s.k / 2;
  q.kscales = s.k / 16;
  q.panels_total = w.panels;
  uint64_t* stamps = nullptr;  // the time line, for diagnosis (stamps.hpp)
  if (dev.stream_stamps.words != nullptr) {
    if (c.ctas > dev.stream_stamps.ctas)
      throw usage_error(fmt::format("sm90: the stream stamps have room for {} CTAs, the launch has {}",
                                    dev.stream_stamps.ctas, c.ctas));
    stamps = dev.stream_stamps.words;
    dev.stream_stamps.grid = c.ctas;
  }
  switch (c.m_tile) {
    case 8: launch_kernel<1>(q, stamps, c.ctas, w.smem, stream, dev); break;
    case 16: launch_kernel<2>(q, stamps, c.ctas, w.smem, stream, dev); break;
    default: launch_kernel<4>(q, stamps, c.ctas, w.smem, stream, dev); break;
  }
}

}  // namespace nvfp4::sm90
