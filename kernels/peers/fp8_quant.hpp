// NVFP4 -> FP8 E4M3 requantization for the FP8 peers (untimed, in prepare()). The values are
// the exact dequantized NVFP4 values divided by an fp32 scale chosen so the largest magnitude
// maps to 448 (E4M3's maximum), then rounded to E4M3: a different numeric than NVFP4, so these
// peers are timed, never verified.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "src/format/fp8_block_scales.hpp"

namespace nvfp4 {

// Per-tensor: *scale = amax / 448 over all `blocks` blocks of (q, sf) (1 when amax is 0).
// `scratch` is one device uint32. Asynchronous.
void fp8_tensor_scale(const uint8_t* q, const uint8_t* sf, int64_t blocks, float* scale,
                      uint32_t* scratch, cudaStream_t stream);
// out[e] = E4M3(value[e] / *scale), 16 bytes per block.
void quantize_fp8_tensor(const uint8_t* q, const uint8_t* sf, int64_t blocks, const float* scale,
                         uint8_t* out, cudaStream_t stream);

// Block scales of an operand [batches, rows, K] in `layout` (rows, k set; per batch at
// layout.batch_stride() floats): amax of each 1x128 row segment (Vec128) or 128x128 tile
// (Blk128x128) / 448, 1 for an all-zero block, padding entries 0.
void fp8_block_scales(const uint8_t* q, const uint8_t* sf, const Fp8BlockScaleLayout& layout,
                      int64_t batches, float* scales, cudaStream_t stream);
// out = E4M3(value / its block's scale), [batches, rows, K] K-major.
void quantize_fp8_block(const uint8_t* q, const uint8_t* sf, const Fp8BlockScaleLayout& layout,
                        int64_t batches, const float* scales, uint8_t* out, cudaStream_t stream);

}  // namespace nvfp4
