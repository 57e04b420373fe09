// `sm90`: NVFP4 GEMM for Hopper (sm_90a). Internals shared by the kernel, its tests and its
// timing harness; the tool itself only sees the Gemm made by make_sm90_gemm().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "src/gemm/gemm.hpp"

namespace nvfp4::sm90 {

// One launch configuration, of one of the two paths:
//   version 5, the fused path (sm90_fused.cuh): A decoded once to fp16 tiles by a prepass; a
//     persistent warp-specialised kernel whose producer warp brings the fp16 A slab, raw packed B
//     and B's scales into one ring stage, and whose two consumer warpgroups decode B from shared
//     memory into wgmma register fragments (C^T = B A^T) for K block i+1 while blocks i-1 and i
//     run; tile mt (M: 16, 32, 64, 128 or 256) x 128 (N), `split` K splits reduced by the last
//     split of each tile (in split order: deterministic), TMA-store epilogue.
//   version 4, the two-phase path (sm90_two_phase.cu): A and B decoded once to fp16 into the
//     workspace (src/problem/dequant), then the persistent warp-specialised fp16 mainloop
//     (f16_mainloop.cuh: TMA ring, producer warp, two consumer warpgroups, SS wgmma) with tile
//     f16_bm x f16_bn and `split` K splits reduced inside the kernel. Chosen at large M, and at
//     M = 1024 where its narrower tiles fill the SMs better.
// (v1-v3, earlier fused designs, are in git history: docs/kernels.md has the table.)
struct Config {
  int version = 5;    // 5 (fused) or 4 (two-phase)
  int split = 1;      // >= 1; 1 writes fp16 directly
  int mt = 128;       // v5: M tile (the wgmma N), 16, 32, 64, 128 or 256; the N tile is 128
  int f16_bm = 256;   // v4: the fp16 mainloop's tile (128 x 16..256 in steps of 16, or 256x128)
  int f16_bn = 128;
  int f16_group = 8;  // v4: tile-rows per scheduler group (L2 reuse)
};

// Which path the registered kernel may take: `sm90` chooses per shape, `sm90-fused` and
// `sm90-2phase` force one (for side-by-side comparisons).
enum class Path { Auto, Fused, TwoPhase };

constexpr int kMaxSplitV4 = 16;
constexpr int kMaxSplitV5 = 16;

constexpr int kGranuleK = 64;  // K per pipeline stage: 4 wgmma k-steps, 4 scale blocks

// Runs here only on compute capability 9.0 (sm_90a code); the reason names what is missing.
Availability availability(const DeviceInfo& dev);
// Empty when supported, else the rule broken.
std::string shape_error(const Shape& s);
// The per-problem heuristic of the registered kernel: each path's cost model (fitted to H200
// timings, in microseconds) picks its tile and split; the path with the lower estimate runs
// (documented in sm90_gemm.cu).
Config choose_config(const Shape& s, int sm_count, Path path = Path::Auto);
// The fused path's best M tile and split, and the two-phase path's best tile and split.
Config choose_fused_config(const Shape& s, int sm_count);
Config choose_two_phase_config(const Shape& s, int sm_count);
// The cost models behind those choices: estimated microseconds of a whole call on an H200.
double estimate_fused_us(const Shape& s, const Config& c, int sm_count);
double estimate_two_phase_us(const Shape& s, const Config& c, int sm_count);
// v4: workspace (fp16 A and B, the mainloop's split-K partials) and launch (sm90_two_phase.cu).
size_t two_phase_workspace_bytes(const Shape& s, const Config& c);
void launch_two_phase(const Shape& s, const Operands& ops, const Config& c, void* workspace,
                      cudaStream_t stream);
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
