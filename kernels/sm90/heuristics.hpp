// The sm90 kernel's heuristics: each path's cost model (estimated microseconds of a whole call on
// an H200, fitted to its timings), the configurations each chooser weighs, the choosers, and the
// rule between the paths. Pure host C++ without CUDA headers (CMake target
// nvfp4_sm90_heuristics; ctest sm90_heuristics_host_only); tests/unit/sm90_host_test.cpp checks
// it against the timings in tests/fixtures/sm90-fit/.
#pragma once

#include <string>
#include <vector>

#include "kernels/sm90/config.hpp"

namespace nvfp4::sm90 {

// The fused path, split-K or (c.workers > 0) stream-K.
double estimate_fused_us(const Shape& s, const FusedConfig& c, int sm_count);
// The fp16 mainloop alone, and the two-phase path (the decode pass plus the mainloop).
double estimate_mainloop_us(const Shape& s, const TwoPhaseConfig& c, int sm_count);
double estimate_two_phase_us(const Shape& s, const TwoPhaseConfig& c, int sm_count);

// What each chooser may take for the shape, in its order of preference on near-ties (the fused
// path's stream-K configurations, sm_count workers, are listed and may be pinned; its chooser
// weighs them only where M <= kStreamKChosenMaxM).
std::vector<FusedConfig> fused_candidates(const Shape& s, int sm_count);
std::vector<TwoPhaseConfig> two_phase_candidates(const Shape& s);

// Stream-K's estimate was checked against timings at M <= 512 only (heuristics.cpp).
constexpr int64_t kStreamKChosenMaxM = 512;

// Each path's cheapest candidate by its model, normalised. choose_fused_split_k weighs the fused
// path's split-K candidates alone; choose_fused takes stream-K instead where its estimate is
// lower (M <= kStreamKChosenMaxM).
FusedConfig choose_fused_split_k(const Shape& s, int sm_count);
FusedConfig choose_fused(const Shape& s, int sm_count);
TwoPhaseConfig choose_two_phase(const Shape& s, int sm_count);
// The registered kernel's choice: the forced path's pick, or (Auto) the path whose model
// estimates the lower time.
Config choose_config(const Shape& s, int sm_count, Path path = Path::Auto);

// Every configuration `path` could pick for the shape (Auto: the fused ones, then the
// two-phase ones): the candidates above, each as describe() spells it.
std::vector<Config> configurations(const Shape& s, Path path, int sm_count);
// "" when `c` is one of configurations(s, path), else why not.
std::string configuration_error(const Shape& s, Path path, const Config& c, int sm_count);

}  // namespace nvfp4::sm90
