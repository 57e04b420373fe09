// `sm90`: NVFP4 GEMM for Hopper (sm_90a). Internals shared by the kernel, its tests and its
// timing harness; the tool itself only sees the Gemm made by make_sm90_gemm().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "kernels/kernel.hpp"

namespace nvfp4::sm90 {

// One launch configuration: CTA tile 128 (M) x bn (N), K split into `split` contiguous ranges
// whose FP32 partials are summed in split order by a second kernel (deterministic).
struct Config {
  int bn = 256;    // 128, 192, 224 or 256 (the wgmma N)
  int split = 1;   // >= 1; 1 writes fp16 directly
  int diag = 0;    // timing experiments only (bench): 1 = no decode, 2 = no wgmma; wrong results
};

constexpr int kGranuleK = 64;  // K per pipeline stage: 4 wgmma k-steps, 4 scale blocks

// Empty when supported, else the rule broken.
std::string shape_error(const Shape& s);
// The per-problem heuristic (documented in sm90_gemm.cu).
Config choose_config(const Shape& s, int sm_count);
// Split clamped so that every split has at least one K granule.
Config normalize(const Shape& s, Config c);
size_t workspace_bytes(const Shape& s, const Config& c);
std::string describe(const Config& c);
// Asynchronous on `stream`; workspace must hold workspace_bytes(s, c).
void launch(const Shape& s, const Operands& ops, const Config& c, void* workspace,
            cudaStream_t stream);
// SM count of the current device (132 when it cannot be queried).
int current_sm_count();

}  // namespace nvfp4::sm90
