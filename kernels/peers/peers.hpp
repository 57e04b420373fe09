// The comparison GEMMs (Role::Peer): what the same problem costs through other formats.
// Their run() is what gets timed; operands converted in prepare() are, by definition of the
// peer, "already converted" (a user who stores weights that way pays no conversion).
//   cublaslt-nvfp4  native cuBLASLt NVFP4 (reference/cublaslt_references.hpp), cc 10.0+
//   dequant-f16     dequantize to FP16 + cuBLASLt FP16 GEMM, both in run()
//                   (reference/cublaslt_references.hpp)
//   f16-predeq      cuBLASLt FP16 GEMM on operands dequantized in prepare(); fp16 output
//   bf16-predeq     cuBLASLt BF16 GEMM on operands dequantized in prepare(); writes BF16 bits
//                   into C (cuBLASLt has no bf16-in / fp16-out GEMM), so it is not verified
//   fp8-tensor      cuBLASLt FP8 E4M3 GEMM, one fp32 scale per tensor (amax/448), TN, fp16
//                   output; cc 8.9+
//   fp8-block       cuBLASLt FP8 E4M3 GEMM with 1x128 (VEC128_32F) activation scales and
//                   128x128 (BLK128x128_32F) weight scales (DeepSeek style); Hopper only
// FP8 peers requantize the exact NVFP4 values (different numerics: timed, never verified).
#pragma once

#include <memory>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

std::unique_ptr<Gemm> make_f16_predeq_peer();
std::unique_ptr<Gemm> make_bf16_predeq_peer();
std::unique_ptr<Gemm> make_fp8_tensor_peer();
std::unique_ptr<Gemm> make_fp8_block_peer();

}  // namespace nvfp4
