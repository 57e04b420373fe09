#include "src/problem/dequant.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "src/device/cuda_check.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4 {
namespace {

template <Dequant16 T>
__device__ __forceinline__ uint16_t to_bits(float x) {
  // Exact: |x| is 0 or in [2^-10, 2688] with at most 6 significant bits.
  if constexpr (T == Dequant16::F16)
    return __half_as_ushort(__float2half_rn(x));
  else
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

// One thread per 16-element block: 8 bytes and a scale in, 32 bytes out (two 16-byte stores).
template <Dequant16 T>
__global__ void dequant_kernel(const uint8_t* __restrict__ q, const uint8_t* __restrict__ sf,
                               int64_t blocks, uint16_t* __restrict__ out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks; blk += stride) {
    const uint2 packed = *reinterpret_cast<const uint2*>(q + blk * 8);
    const float s = scale_decode(sf[blk]);
    alignas(16) uint16_t v[kBlockSize];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const unsigned byte = ((i < 4 ? packed.x : packed.y) >> (8 * (i % 4))) & 0xFFu;
      v[2 * i] = to_bits<T>(e2m1_decode(byte & 0xFu) * s);  // even K index: low nibble
      v[2 * i + 1] = to_bits<T>(e2m1_decode(byte >> 4) * s);
    }
    uint4* dst = reinterpret_cast<uint4*>(out + blk * kBlockSize);
    dst[0] = reinterpret_cast<const uint4*>(v)[0];
    dst[1] = reinterpret_cast<const uint4*>(v)[1];
  }
}

}  // namespace

void dequantize_nvfp4(const uint8_t* q, const uint8_t* sf, int64_t blocks, Dequant16 type,
                      uint16_t* out, cudaStream_t stream) {
  if (blocks <= 0) return;
  constexpr int kThreads = 256;
  const int64_t grid = std::min<int64_t>((blocks + kThreads - 1) / kThreads, int64_t(1) << 20);
  if (type == Dequant16::F16)
    dequant_kernel<Dequant16::F16><<<unsigned(grid), kThreads, 0, stream>>>(q, sf, blocks, out);
  else
    dequant_kernel<Dequant16::BF16><<<unsigned(grid), kThreads, 0, stream>>>(q, sf, blocks, out);
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4
