// The sm90 kernel's heuristics: each path's cost model (estimated microseconds of a whole call on
// an H200, fitted to its timings), the configurations each chooser weighs, the choosers, and the
// rule between the paths. Pure host C++ without CUDA headers (CMake target
// nvfp4_sm90_heuristics; ctest sm90_heuristics_host_only); tests/unit/sm90_host_test.cpp checks
// it against the timings in tests/fixtures/sm90-fit/.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "kernels/sm90/config.hpp"

namespace nvfp4::sm90 {

// Each cost model is linear in its coefficients: the estimate is the sum of terms(s, c)[i] x
// coefficients[i], where a term counts something of the call (K blocks a CTA runs, rounds of
// units, elements decoded) and its coefficient is microseconds per count, fitted to H200 timings
// (kernels/sm90/fit.hpp refits them; heuristics.cpp says what each term counts).
constexpr int kFusedTerms = 11;
constexpr int kTwoPhaseTerms = 8;
using FusedTerms = std::array<double, kFusedTerms>;
using TwoPhaseTerms = std::array<double, kTwoPhaseTerms>;
struct CostModels {
  FusedTerms fused{};
  TwoPhaseTerms two_phase{};
};
// The coefficients the choosers use (heuristics.cpp).
const CostModels& shipped_models();
// Each term's name, as the fitter prints it.
const char* fused_term_name(int i);
const char* two_phase_term_name(int i);

// The fused path's terms (split-K or, c.workers > 0, stream-K), and the two-phase path's: the
// first kMainloopTerms are the fp16 mainloop's, the rest the decode pass's. A two-phase tile
// that is not built has no terms (estimate_mainloop_us answers 1e300 for it).
FusedTerms fused_terms(const Shape& s, const FusedConfig& c, int sm_count);
constexpr int kMainloopTerms = 6;
TwoPhaseTerms two_phase_terms(const Shape& s, const TwoPhaseConfig& c, int sm_count);

// The fused path, split-K or (c.workers > 0) stream-K.
double estimate_fused_us(const Shape& s, const FusedConfig& c, int sm_count,
                         const CostModels& m = shipped_models());
// The fp16 mainloop alone, and the two-phase path (the decode pass plus the mainloop).
double estimate_mainloop_us(const Shape& s, const TwoPhaseConfig& c, int sm_count,
                            const CostModels& m = shipped_models());
double estimate_two_phase_us(const Shape& s, const TwoPhaseConfig& c, int sm_count,
                             const CostModels& m = shipped_models());

// What each chooser may take for the shape, in its order of preference on near-ties (the fused
// path's stream-K configurations, sm_count workers, are listed and may be pinned; its chooser
// weighs them only where M <= kStreamKChosenMaxM).
std::vector<FusedConfig> fused_candidates(const Shape& s, int sm_count);
std::vector<TwoPhaseConfig> two_phase_candidates(const Shape& s);

// Stream-K's estimate was checked against timings at M <= 512 only (heuristics.cpp).
constexpr int64_t kStreamKChosenMaxM = 512;

// Each path's cheapest candidate by its model (`m`: the shipped coefficients unless a refit is
// being weighed), normalised. choose_fused_split_k weighs the fused path's split-K candidates
// with one CTA per SM alone (what the fitted timings hold); choose_fused takes stream-K instead
// where its estimate is lower (M <= kStreamKChosenMaxM), and then, unless two_per_sm is false,
// two CTAs per SM (M tile 16) where theirs is.
FusedConfig choose_fused_split_k(const Shape& s, int sm_count, const CostModels& m = shipped_models());
FusedConfig choose_fused(const Shape& s, int sm_count, const CostModels& m = shipped_models(),
                         bool two_per_sm = true);
TwoPhaseConfig choose_two_phase(const Shape& s, int sm_count, const CostModels& m = shipped_models());
// The streaming path (small M): its configuration for the shape - the smallest M tile (8, 16, 32)
// holding M, stream_warps(m_tile) warps, one CTA per SM or one per that many units where fewer
// - or none (m_tile 0) where it does not run the
// shape (stream_shape_error).
StreamConfig stream_candidate(const Shape& s, int sm_count);

// Auto takes the streaming path ahead of both cost models (it has no fitted model) where
// stream_chosen holds: it runs the shape, M <= kStreamChosenMaxM, L = 1, and a full grid's warps
// (sms x stream_warps(8)) get between kStreamChosenMinUnits and kStreamChosenMaxUnits units each.
// Below the band the path's fixed costs (A slab, grid barrier, sums) outweigh its loop; above it
// the fused path streams B as fast. Set from device runs on an H100 (docs/kernels.md,
// the streaming path, "When it is taken"): faster on every shape measured inside the band
// (1.02-1.18x), slower or within 1.5 % on every one outside it. At M > 8 it was slower on most shapes.
// `--kernel-config 'stream …'` forces it anywhere it runs.
constexpr int64_t kStreamChosenMaxM = 8;
constexpr double kStreamChosenMinUnits = 2.5;  // units a warp
constexpr double kStreamChosenMaxUnits = 16;
bool stream_chosen(const Shape& s, int sm_count);

// The registered kernel's choice: the forced path's pick, or (Auto) the streaming path by
// stream_chosen, else the path whose model estimates the lower time.
Config choose_config(const Shape& s, int sm_count, Path path = Path::Auto,
                     const CostModels& m = shipped_models());

// Every configuration `path` could pick for the shape (Auto: the fused ones, the two-phase ones,
// then the streaming one): the candidates above, each as describe() spells it.
std::vector<Config> configurations(const Shape& s, Path path, int sm_count);
// "" when `c` is one of configurations(s, path), else why not.
std::string configuration_error(const Shape& s, Path path, const Config& c, int sm_count);

}  // namespace nvfp4::sm90
