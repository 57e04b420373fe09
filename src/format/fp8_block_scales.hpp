// The fp32 scale layouts of cuBLASLt's Hopper block-scaled FP8 GEMM (DeepSeek-style scaling),
// used by the fp8-block peer's quantizer and by the cuBLASLt config. For a tensor of `rows` rows
// (M or N) and K columns, per batch (CUDALibrarySamples cuBLASLt/Common/helpers.h
// getScaleTensorSize; PyTorch test_scaled_matmul_cuda.py layouts):
//   VEC128      one scale per row and 128-wide K block: ceil(K/128) x rows, rows contiguous
//               ("outer-dim-major"): index = kb * rows + r
//   BLK128x128  one scale per 128x128 tile: ceil(rows/128) x roundup(ceil(K/128), 4), K blocks
//               contiguous: index = (r/128) * roundup(ceil(K/128), 4) + kb
#pragma once

#include <cstdint>

#include "src/format/nvfp4.hpp"

namespace nvfp4 {

constexpr int kFp8Block = 128;

enum class Fp8BlockKind : int { Vec128 = 0, Blk128x128 = 1 };

struct Fp8BlockScaleLayout {
  Fp8BlockKind kind = Fp8BlockKind::Vec128;
  int64_t rows = 0;
  int64_t k = 0;

  NVFP4_HD int64_t kblocks() const { return (k + kFp8Block - 1) / kFp8Block; }
  NVFP4_HD int64_t kblocks_padded() const { return (kblocks() + 3) / 4 * 4; }
  NVFP4_HD int64_t row_blocks() const { return (rows + kFp8Block - 1) / kFp8Block; }
  // fp32 elements of one batch's tensor.
  NVFP4_HD int64_t elements() const {
    return kind == Fp8BlockKind::Vec128 ? kblocks() * rows : row_blocks() * kblocks_padded();
  }
  // Element index of the scale covering row r, 128-wide K block kb.
  NVFP4_HD int64_t index(int64_t r, int64_t kb) const {
    return kind == Fp8BlockKind::Vec128 ? kb * rows + r : (r / kFp8Block) * kblocks_padded() + kb;
  }
  // Per-batch stride in elements: a multiple of 64 floats (256 bytes), so every batch's tensor
  // keeps the 256-byte alignment cuBLASLt assumes by default.
  NVFP4_HD int64_t batch_stride() const { return (elements() + 63) / 64 * 64; }
};

}  // namespace nvfp4
