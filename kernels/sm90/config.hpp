// The sm90 kernel's configurations: which of its two paths runs and with what tile and split (one
// part per path), the limits they share, their workspace layouts, and how a configuration is
// spelt (the report's kernel.configuration, --kernel-config). Pure host C++ without CUDA headers:
// the heuristics, the host test and the launchers all use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/gemm/shape.hpp"

namespace nvfp4::sm90 {

constexpr int kGranuleK = 64;  // the K block: 4 wgmma k-steps, 4 scale blocks; both paths' K unit
constexpr int kMaxSplit = 16;  // K splits per output tile, both paths

// Which path the registered kernel may take: `sm90` chooses per shape, `sm90-fused` and
// `sm90-2phase` force one (for side-by-side comparisons). Stream (small M) is the third path; it
// is forced by its configuration (--kernel-config 'stream ...'), Auto takes it by the rule in
// heuristics.hpp (stream_chosen).
enum class Path { Auto, Fused, TwoPhase, Stream };

// The fused path (fused.cu): A decoded once to fp16 by a prepass, B decoded from shared memory
// into wgmma register fragments (C^T = B A^T); tile m_tile (the wgmma N: 16, 32, 64, 128 or
// 256) x 128 rows of N, `split` K splits reduced by the last split of each tile; or, with
// workers > 0, stream-K (stream_k.hpp): that many CTAs each take an equal share of all tiles'
// K, a tile's pieces reduced the same way (split is then 1). per_sm: CTAs per SM, 1 or (M tile
// 16 only) 2 - twice the consumer warps per SM, each CTA with half the shared memory and
// registers; stream-K then has per_sm x SMs workers.
struct FusedConfig {
  int m_tile = 128;
  int split = 1;
  int workers = 0;
  int per_sm = 1;
};

// The two-phase path (two_phase.cu): A and B decoded once to fp16, then the fp16 mainloop with
// tile bm x bn (128 x 16..256 in steps of 16, or 256x128), `split` K splits reduced inside the
// kernel, `group` tile-rows per scheduler group (L2 reuse).
struct TwoPhaseConfig {
  int bm = 128;
  int bn = 256;
  int split = 1;
  int group = 8;
};

// The streaming path for small M (stream.cu, stream_plan.hpp): no B ring, no prepass; `warps`
// warps a CTA, `ctas` CTAs (one an SM) each warp streaming its own share of (16-row B panel, 256-K
// group) units from global memory into registers, mma.sync with the activations (M <= m_tile:
// 8, 16 or 32) from a per-CTA shared slab of decoded A.
struct StreamConfig {
  int m_tile = 16;
  int ctas = 132;
  int warps = 16;
};

// One launch configuration: `path` (Fused, TwoPhase or Stream) says which part is used.
struct Config {
  Path path = Path::Fused;
  FusedConfig fused;
  TwoPhaseConfig two_phase;
  StreamConfig stream;
  int split() const { return path == Path::TwoPhase ? two_phase.split : path == Path::Stream ? 1 : fused.split; }
};

// The fused kernel's fixed geometry (fused_kernel.cuh uses the same constants).
constexpr int kFusedRowsN = 128;           // B rows (C columns) per tile
constexpr int kFusedGroup = 8;             // M tiles per raster band
constexpr int kFusedATile = 128 * 128;     // bytes of one prepass tile: 128 rows x 64 fp16
constexpr int kFusedBStageKb = 4;         // K blocks per stage of the raw-B ring (128 bytes a row)
// A B stage's scales (one per K block and row): one TMA box row of kFusedScaleRow bytes, the two
// K quads from the one holding the stage's first K block kb, read from the row's scale byte
// fused_scale_box_start(kb) - TMA takes only 16-byte aligned starts, and a split may start
// inside a quad. K block kb + j (j < kFusedBStageKb) is at byte fused_scale_in_box(kb) + 4j of
// the box row; every stage of a unit has the same offset (its stages are kFusedBStageKb apart).
// (Device code calls these too: --expt-relaxed-constexpr.)
constexpr int kFusedScaleRow = 2 * kFusedBStageKb * 4;
static_assert((kFusedBStageKb & (kFusedBStageKb - 1)) == 0, "masks below: a power of two");
constexpr int fused_scale_box_start(int kb) { return (kb & ~(kFusedBStageKb - 1)) * 4; }
constexpr int fused_scale_in_box(int kb) { return (kb & (kFusedBStageKb - 1)) * 4; }

bool fused_tile_built(int m_tile);         // 16, 32, 64, 128, 256
// Two CTAs per SM are built for M tile 16 only: the consumers' 96 registers spill at 32.
bool fused_per_sm_built(int m_tile, int per_sm);
constexpr const char* kFusedPerSmRule = "two CTAs per SM with M tile 16 only, else one";
bool mainloop_tile_built(int bm, int bn);  // 128 x 16..256 in steps of 16, or 256x128

// Fused workspace: [A prepass tiles][split-K partials][tile counters], 256-byte aligned parts.
// The prepass writes whole 128-row tiles (rows past M zero); an M tile below 128 rows is a row
// slice of one of them.
struct FusedLayout {
  int tiles128 = 0, tiles_m = 0, tiles_n = 0, tiles = 0;
  int slots = 0;  // FP32 partials per tile: the split, or stream-K's most pieces of a tile; 0 if none
  size_t a16 = 0, partial = 0, counters = 0, total = 0;
};
FusedLayout fused_layout(const Shape& s, const FusedConfig& c);

// What the fused kernel's CTAs walk (walk.hpp's UnitWalk reads these fields by name), made here
// once for the launcher (fused.cu) and for the host test that walks every CTA
// (sm90_config_test). Throws usage_error where the shape's units do not fit an int or stream-K
// has fewer K quads than workers.
struct FusedWalk {
  int tiles_m = 0, tiles_n = 0;
  int nk = 0;       // K / 64
  int split = 1;    // split-K: K splits per tile (1 with stream-K)
  int units = 0;    // split-K: l * tiles_m * tiles_n * split
  int workers = 0;  // > 0: stream-K over this many CTAs (the grid; stream_k.hpp)
  int nq = 0;       // K quads (kFusedBStageKb K blocks) per tile
  int64_t wq = 0;   // stream-K: quads of all tiles, l * tiles_m * tiles_n * nq
  int grid = 0;     // CTAs launched: the workers, else per_sm x SMs at most
};
FusedWalk fused_walk(const Shape& s, const FusedConfig& c, int sm_count);

// The fp16 mainloop's own workspace (split-K partials and counters; 0 without split-K).
size_t mainloop_workspace_bytes(const Shape& s, const TwoPhaseConfig& c);
// Two-phase workspace: [fp16 A, L*M*K][fp16 B, L*N*K][the mainloop's], 256-byte aligned parts.
struct TwoPhaseLayout {
  size_t a16 = 0, b16 = 0, mainloop = 0, total = 0;
};
TwoPhaseLayout two_phase_layout(const Shape& s, const TwoPhaseConfig& c);

// Empty when the kernel supports the shape, else the rule broken.
std::string shape_error(const Shape& s);

// The streaming path's limits: K a multiple of kStreamGroupK (a unit's K), M at most kStreamMaxM.
constexpr int kStreamGroupK = 256;
constexpr int kStreamMaxM = 32;
constexpr int kStreamMaxCtas = 65535;  // CTAs x units fit 32 bits where units < CTAs (stream_plan.hpp)
// Warps a CTA, the one count built per M tile: 16, or 12 at M tile 32 (its accumulators need
// more than the 128 registers a thread of 16 warps has).
constexpr int stream_warps(int m_tile) { return m_tile == 32 ? 12 : 16; }
// The streaming path's units for shape s: L x ceil(N / 16) panels x K / 256 groups (at least one).
int64_t stream_units(const Shape& s);
constexpr size_t kStreamSmemLimit = 227 * 1024;   // an H200 CTA's dynamic shared memory at most
bool stream_tile_built(int m_tile);               // 8, 16, 32
// Empty when the streaming path runs shape s with configuration c, else the rule broken (K, M,
// the tile, the A slab and the warps' partials in shared memory). `layout`: stream_layout(s, c)
// where the caller has it already (the launcher: one layout a call).
struct StreamLayout;
std::string stream_shape_error(const Shape& s, const StreamConfig& c, const StreamLayout* layout = nullptr);

// The streaming path's workspace: per panel-slice, its pieces' FP32 partials (slots x 16 x m_tile).
struct StreamLayout {
  int64_t panels = 0;     // L x ceil(N / 16)
  int slices = 0;         // K slices a batch (a slice: slice_groups groups of 256 K)
  int slice_groups = 0;
  int slots = 0;          // pieces (CTAs) one panel-slice can have at most
  int slab_slices = 0;    // K slices of decoded A a CTA holds in shared memory at most
  int64_t units = 0;      // L x slices x ceil(N / 16) x slice_groups
  size_t smem = 0;        // dynamic shared memory a CTA: the A slab and the warps' boundary partials
  size_t partial = 0, total = 0;
};
StreamLayout stream_layout(const Shape& s, const StreamConfig& c);
struct StreamPlan;  // stream_plan.hpp
// The work split stream_layout chose (its slice), as the kernel walks it.
StreamPlan stream_plan(const Shape& s, const StreamConfig& c);
StreamPlan stream_plan(const Shape& s, const StreamConfig& c, const StreamLayout& w);

// Split clamped to [1, min(K/64, kMaxSplit)], then to the number of non-empty even shares of
// K/64 (both paths give split s the K blocks [s*nk/S, (s+1)*nk/S)).
Config normalize(const Shape& s, Config c);
size_t workspace_bytes(const Shape& s, const Config& c);

// "fused 128x128 split 2", "fused 128x128 stream-k 132", "fused 16x128 split 1 per-sm 2",
// "two-phase 128x144 split 1 group 16", "stream 16x16 ctas 132 warps 16" (M tile x panel rows).
std::string describe(const Config& c);
// The inverse of describe(): "" and *out set when `text` is one such spelling, else the reason.
std::string parse_config(const std::string& text, Config* out);

}  // namespace nvfp4::sm90
