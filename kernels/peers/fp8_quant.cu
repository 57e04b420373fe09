#include "kernels/peers/fp8_quant.hpp"

#include <algorithm>

#include "src/device/cuda_check.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4 {
namespace {

constexpr int kThreads = 256;
constexpr float kE4m3Max = 448.0f;

unsigned grid_for(int64_t items) {
  return unsigned(
      std::max<int64_t>(1, std::min<int64_t>((items + kThreads - 1) / kThreads, int64_t(1) << 20)));
}

__device__ __forceinline__ float block_amax(const uint8_t* q, const uint8_t* sf, int64_t blk) {
  int m = 0;
  for (int i = 0; i < 8; ++i) {
    const unsigned byte = q[blk * 8 + i];
    m = max(m, max(e2m1_twice_magnitude(byte & 0xFu), e2m1_twice_magnitude(byte >> 4)));
  }
  return 0.5f * float(m) * scale_decode(sf[blk]);
}

__device__ __forceinline__ float scale_for(float amax) {
  return amax > 0.0f ? amax / kE4m3Max : 1.0f;
}

// 16 values of one block divided by `s`, rounded to E4M3 (saturating), one 16-byte store.
__device__ __forceinline__ void quantize_block(const uint8_t* q, const uint8_t* sf, int64_t blk,
                                               float s, uint8_t* out) {
  const float bs = scale_decode(sf[blk]);
  alignas(16) uint8_t v[kBlockSize];
  for (int i = 0; i < 8; ++i) {
    const unsigned byte = q[blk * 8 + i];
    v[2 * i] = uint8_t(e4m3_encode(e2m1_decode(byte & 0xFu) * bs / s));
    v[2 * i + 1] = uint8_t(e4m3_encode(e2m1_decode(byte >> 4) * bs / s));
  }
  *reinterpret_cast<uint4*>(out + blk * kBlockSize) = *reinterpret_cast<const uint4*>(v);
}

__global__ void amax_kernel(const uint8_t* __restrict__ q, const uint8_t* __restrict__ sf,
                            int64_t blocks, uint32_t* amax_bits) {
  float m = 0.0f;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks; blk += stride)
    m = fmaxf(m, block_amax(q, sf, blk));
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, off));
  // Non-negative floats order like their bit patterns.
  if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, __float_as_uint(m));
}

__global__ void tensor_scale_kernel(const uint32_t* amax_bits, float* scale) {
  *scale = scale_for(__uint_as_float(*amax_bits));
}

__global__ void quantize_tensor_kernel(const uint8_t* __restrict__ q,
                                       const uint8_t* __restrict__ sf, int64_t blocks,
                                       const float* __restrict__ scale, uint8_t* __restrict__ out) {
  const float s = *scale;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks; blk += stride)
    quantize_block(q, sf, blk, s, out);
}

// One thread per scale: a 1x128 row segment (Vec128) or a 128x128 tile (Blk128x128).
__global__ void block_scales_kernel(const uint8_t* __restrict__ q, const uint8_t* __restrict__ sf,
                                    Fp8BlockScaleLayout lay, int64_t batches,
                                    float* __restrict__ scales) {
  const bool vec = lay.kind == Fp8BlockKind::Vec128;
  const int64_t row_groups = vec ? lay.rows : lay.row_blocks();
  const int64_t kb128 = lay.kblocks();
  const int64_t kb16 = lay.k / kBlockSize;
  const int64_t items = batches * row_groups * kb128;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t it = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; it < items; it += stride) {
    const int64_t batch = it / (row_groups * kb128);
    const int64_t g = (it / kb128) % row_groups;
    const int64_t kb = it % kb128;
    const int64_t r0 = vec ? g : g * kFp8Block;
    const int64_t r1 = vec ? g + 1 : min(lay.rows, r0 + kFp8Block);
    const int64_t j0 = kb * (kFp8Block / kBlockSize);
    const int64_t j1 = min(kb16, j0 + kFp8Block / kBlockSize);
    float m = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = j0; j < j1; ++j)
        m = fmaxf(m, block_amax(q, sf, (batch * lay.rows + r) * kb16 + j));
    scales[batch * lay.batch_stride() + lay.index(r0, kb)] = scale_for(m);
  }
}

__global__ void quantize_block_kernel(const uint8_t* __restrict__ q, const uint8_t* __restrict__ sf,
                                      Fp8BlockScaleLayout lay, int64_t batches,
                                      const float* __restrict__ scales, uint8_t* __restrict__ out) {
  const int64_t kb16 = lay.k / kBlockSize;
  const int64_t blocks = batches * lay.rows * kb16;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks; blk += stride) {
    const int64_t batch = blk / (lay.rows * kb16);
    const int64_t r = (blk / kb16) % lay.rows;
    const int64_t kb = (blk % kb16) / (kFp8Block / kBlockSize);
    quantize_block(q, sf, blk, scales[batch * lay.batch_stride() + lay.index(r, kb)], out);
  }
}

}  // namespace

void fp8_tensor_scale(const uint8_t* q, const uint8_t* sf, int64_t blocks, float* scale,
                      uint32_t* scratch, cudaStream_t stream) {
  NVFP4_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(uint32_t), stream));
  if (blocks > 0) {
    amax_kernel<<<grid_for(blocks), kThreads, 0, stream>>>(q, sf, blocks, scratch);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  tensor_scale_kernel<<<1, 1, 0, stream>>>(scratch, scale);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void quantize_fp8_tensor(const uint8_t* q, const uint8_t* sf, int64_t blocks, const float* scale,
                         uint8_t* out, cudaStream_t stream) {
  if (blocks <= 0) return;
  quantize_tensor_kernel<<<grid_for(blocks), kThreads, 0, stream>>>(q, sf, blocks, scale, out);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void fp8_block_scales(const uint8_t* q, const uint8_t* sf, const Fp8BlockScaleLayout& layout,
                      int64_t batches, float* scales, cudaStream_t stream) {
  NVFP4_CUDA_CHECK(cudaMemsetAsync(scales, 0, size_t(batches * layout.batch_stride()) * 4, stream));
  const int64_t groups = layout.kind == Fp8BlockKind::Vec128 ? layout.rows : layout.row_blocks();
  const int64_t items = batches * groups * layout.kblocks();
  if (items <= 0) return;
  block_scales_kernel<<<grid_for(items), kThreads, 0, stream>>>(q, sf, layout, batches, scales);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void quantize_fp8_block(const uint8_t* q, const uint8_t* sf, const Fp8BlockScaleLayout& layout,
                        int64_t batches, const float* scales, uint8_t* out, cudaStream_t stream) {
  const int64_t blocks = batches * layout.rows * (layout.k / kBlockSize);
  if (blocks <= 0) return;
  quantize_block_kernel<<<grid_for(blocks), kThreads, 0, stream>>>(q, sf, layout, batches, scales,
                                                                   out);
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace nvfp4
