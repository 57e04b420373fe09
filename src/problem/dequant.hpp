// NVFP4 -> FP16/BF16 dequantization on the GPU: value * block scale, which is exact in both
// formats (docs/facts.md section 1). The cuBLASLt FP16 emulation reference and the 16-bit peers
// feed cuBLASLt with its output; the sm90 kernel's two-phase path feeds its fp16 mainloop.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nvfp4 {

enum class Dequant16 { F16, BF16 };

// Dequantizes `blocks` consecutive 16-element blocks: packed E2M1 `q` (8 bytes per block) with
// one linear E4M3 scale per block `sf` into `out` (16 elements per block, 16-bit bits).
// For an operand [L, R, K/2] with linear scales [L, R, K/16]: blocks = L*R*K/16 and the output
// is [L, R, K], K-major. `q` must be 8-byte and `out` 16-byte aligned. Asynchronous.
void dequantize_nvfp4(const uint8_t* q, const uint8_t* sf, int64_t blocks, Dequant16 type,
                      uint16_t* out, cudaStream_t stream);

}  // namespace nvfp4
