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

namespace {

// One block per (batch, 128-row tile, K granule): each thread decodes its row into shared memory
// (swizzled as the main kernel wants it), then the block writes the 16 KB tile coalesced.
__global__ void __launch_bounds__(128) decode_a_kernel(const PrepassParams p) {
#if defined(__CUDA_ARCH__)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (p.counters != nullptr)  // split-K tile counters start at zero every call
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.ncounters;
         i += int64_t(gridDim.x) * blockDim.x)
      p.counters[i] = 0;
  __shared__ uint4 tile[kATile / 16];
  const int64_t blk = blockIdx.x;
  const int64_t g = blk % p.nk, rest = blk / p.nk;
  const int64_t tm = rest % p.tiles128, batch = rest / p.tiles128;
  const int r = threadIdx.x;
  const int64_t row = tm * 128 + r;
  const int sw = r & 7;
  if (row < p.m) {
    const int64_t kbytes = p.k / 2, kblocks = p.k / 16;
    const uint8_t* src = p.a + (batch * p.m + row) * kbytes + g * 32;
    const uint8_t* ssrc = p.sfa + (batch * p.m + row) * kblocks + g * 4;
    const uint4 lo = __ldg(reinterpret_cast<const uint4*>(src));
    const uint4 hi = __ldg(reinterpret_cast<const uint4*>(src + 16));
    const uint32_t sc = __ldg(reinterpret_cast<const uint32_t*>(ssrc));
    decode_row(lo, hi, sc, [&](int q, uint4 v) { tile[r * 8 + (q ^ sw)] = v; });
  } else {
#pragma unroll
    for (int q = 0; q < 8; ++q) tile[r * 8 + q] = make_uint4(0, 0, 0, 0);  // rows past M
  }
  __syncthreads();
  uint4* dst = reinterpret_cast<uint4*>(p.a16 + blk * int64_t(kATile));
#pragma unroll
  for (int j = 0; j < 8; ++j) dst[r + 128 * j] = tile[r + 128 * j];
#else
  (void)p;
#endif
}

}  // namespace

void launch_prepass(const PrepassParams& p, cudaStream_t stream) {
  const int64_t blocks = p.l * int64_t(p.tiles128) * p.nk;  // tile order = a16 layout order
  decode_a_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(p);
  NVFP4_CUDA_CHECK_LAUNCH();
}

template void launch_fused<16>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<32>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<64>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<128>(const Params&, const CUtensorMap&, int, cudaStream_t);
template void launch_fused<256>(const Params&, const CUtensorMap&, int, cudaStream_t);

}  // namespace nvfp4::sm90::v5
