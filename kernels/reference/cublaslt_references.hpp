// The cuBLASLt references (also registered as peers, under the names documented below):
//   cublaslt-nvfp4  native NVFP4 GEMM (E2M1 + VEC16_UE4M3 block scales), compute capability
//                   10.0+. Reference (auto rank 3) and peer (same name).
//   cublaslt-f16    exact emulation on any sm_80+ GPU: dequantize A and B to FP16 (exact), then
//                   a cuBLASLt FP16 GEMM with FP32 accumulation; the dequantization is part of
//                   run(). Reference (auto rank 2); the same computation is the peer
//                   `dequant-f16` (what a Hopper user with NVFP4 data pays today).
#pragma once

#include <memory>

#include "src/device/cublaslt_config.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// `out` is the element type written to ops.c (the tool's buffers are fp16 today).
std::unique_ptr<Gemm> make_cublaslt_nvfp4(Role role, lt::OutType out = lt::OutType::F16);
std::unique_ptr<Gemm> make_cublaslt_f16(Role role);

// Registry factories.
std::unique_ptr<Gemm> make_cublaslt_nvfp4_reference();
std::unique_ptr<Gemm> make_cublaslt_nvfp4_peer();
std::unique_ptr<Gemm> make_cublaslt_f16_reference();
std::unique_ptr<Gemm> make_dequant_f16_peer();

// The shape used to ask cuBLASLt, in availability(), whether it has any algorithm here.
inline constexpr Shape kProbeShape{128, 256, 256, 1};

// The largest power of two up to 256 that divides the address (256 for null).
uint32_t pointer_alignment(const void* p);

// `c` with each matrix's minimum-alignment preference lowered to what the pointers it will be
// given really have (cuBLAS A is our B, cuBLAS B our A, D our C): the configuration's values
// assume cudaMalloc'd buffers, a plugin or Python caller may pass others.
lt::Config with_pointer_alignment(lt::Config c, const Operands& ops);

}  // namespace nvfp4
