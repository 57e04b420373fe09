// `sm90`: NVFP4 GEMM for Hopper (sm_90a). Internals shared by the kernel, its tests and its
// timing harness; the tool itself only sees the Gemm made by make_sm90_gemm().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "src/gemm/gemm.hpp"

namespace nvfp4::sm90 {

// One launch configuration: CTA tile 128 (M) x bn (N), K split into `split` contiguous ranges
// whose FP32 partials are summed in split order (deterministic).
//   version 2 (default, sm90_ws.cuh): warp-specialised producer/consumer kernel; split-K CTAs of
//     a tile form a cluster and reduce through distributed shared memory (split <= 8).
//     amode 0: A decoded once per problem by a prepass into the workspace (fp16 tiles), amode 1:
//     A decoded per tile by the producer like B.
//   version 3 (sm90_rs.cuh): operands swapped, B decoded into wgmma register fragments by the
//     consumer warps, A from the prepass through a shared-memory ring; tile mt (M) x 128 (N),
//     persistent CTAs, split-K reduced by the last split of each tile (any split).
//   version 1 (sm90_kernel.cuh): every warp loads, decodes and issues wgmma; split-K partials in
//     the workspace summed by a second kernel. Kept for comparison (bench, tests).
//   version 5 (sm90_fused.cuh): the fused path rebuilt on the warp-specialised structure of the
//     fp16 mainloop: a producer warp brings the prepass's fp16 A slab, raw B and B's scales into
//     one ring stage, two consumer warpgroups decode B from shared memory into wgmma register
//     fragments for K block k+1 while wgmma k runs; tile mt (M: 16, 32, 64, 128 or 256) x 128
//     (N), persistent CTAs, split-K reduced by the last split of each tile, TMA-store epilogue.
//   version 4 (two-phase, sm90_two_phase.cu): A and B decoded once to fp16 into the workspace
//     (src/problem/dequant), then the persistent warp-specialised fp16 mainloop
//     (f16_mainloop.cuh: TMA ring, producer warp, two consumer warpgroups, SS wgmma) with tile
//     f16_bm x f16_bn and `split` K splits reduced inside the kernel. Chosen at large M.
struct Config {
  int bn = 256;     // 128, 192, 224 or 256 (the wgmma N)
  int split = 1;    // >= 1; 1 writes fp16 directly
  int diag = 0;     // v1 timing experiments only (bench): 1 = no decode, 2 = no wgmma; wrong results
  int version = 2;  // 1, 2 or 3
  int amode = 0;    // v2 only: 0 = A prepass (workspace), 1 = A decoded per tile
  int producers = 1;  // v2 only: producer warpgroups (2: 512 threads, widths 128/192 only)
  int mt = 128;       // v3: M tile (wgmma N), 128 or 256; v5: 16, 32, 64, 128 or 256; N tile 128
  int bufs = 3;       // v3, 128 tile, K % 256 == 0: raw-B super-granule register buffers (2, 3)
  int f16_bm = 256;   // v4 only: the fp16 mainloop's tile (256x128, 128x256 or 128x128)
  int f16_bn = 128;
  int f16_group = 8;  // v4 only: tile-rows per scheduler group (L2 reuse)
};

// Which path the registered kernel may take: `sm90` chooses per shape, `sm90-fused` and
// `sm90-2phase` force one (for side-by-side comparisons).
// `sm90-fused-v5` forces the v5 fused path (development comparison beside `sm90-fused`).
enum class Path { Auto, Fused, TwoPhase, FusedV5 };

constexpr int kMaxSplitV2 = 8;  // portable cluster size
constexpr int kMaxSplitV3 = 64;
constexpr int kMaxSplitV4 = 16;
constexpr int kMaxSplitV5 = 32;

constexpr int kGranuleK = 64;  // K per pipeline stage: 4 wgmma k-steps, 4 scale blocks

// Runs here only on compute capability 9.0 (sm_90a code); the reason names what is missing.
Availability availability(const DeviceInfo& dev);
// Empty when supported, else the rule broken.
std::string shape_error(const Shape& s);
// The per-problem heuristic of the registered kernel: the two-phase path (v4) from M =
// kTwoPhaseMinM on, else the fused path (v3); within a path, each one's cost model picks tile
// and split (documented in sm90_gemm.cu).
constexpr int64_t kTwoPhaseMinM = 1024;
Config choose_config(const Shape& s, int sm_count, Path path = Path::Auto);
// The fused path's (v3) best split, and the two-phase path's best tile and split.
Config choose_fused_config(const Shape& s, int sm_count);
Config choose_two_phase_config(const Shape& s, int sm_count);
// v5: the M tile and split of least estimated time (cost model in sm90_gemm.cu).
Config choose_fused_v5_config(const Shape& s, int sm_count);
// v4: workspace (fp16 A and B, the mainloop's split-K partials) and launch (sm90_two_phase.cu).
size_t two_phase_workspace_bytes(const Shape& s, const Config& c);
void launch_two_phase(const Shape& s, const Operands& ops, const Config& c, void* workspace,
                      cudaStream_t stream);
// v2's heuristic (v1 at small M with long K, else v2; the registered choice before v3).
Config choose_config_v2(const Shape& s, int sm_count);
// v1's heuristic (bench and tests compare against it).
Config choose_config_v1(const Shape& s, int sm_count);
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
