// The sm90 cost models and choosers (heuristics.hpp). Both models are fitted to one H200's
// timings of every configuration its chooser weighs (tests/fixtures/sm90-fit/; docs/kernels.md,
// "Refitting the cost models"): relative least squares over the configurations within 1.5x of
// each shape's fastest, as kernels/sm90/fit.hpp does it.
#include "kernels/sm90/heuristics.hpp"

#include "kernels/sm90/stream_k.hpp"
#include "kernels/sm90/stream_plan.hpp"
#include "src/core/arith.hpp"
#include "src/core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace nvfp4::sm90 {
namespace {

constexpr int kFusedTiles[] = {256, 128, 64, 32, 16};
constexpr int kFusedSplits[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};
constexpr int kMainloopSplits[] = {1, 2, 3, 4, 6, 8};

}  // namespace

// The models' terms (their coefficients, microseconds per count, are kShipped's alone):
//
// Fused path: the busiest CTA's 64-wide K blocks at its M tile's rate (k_blocks_tile*; the 32
// tile's rate is interpolated, no timing exercises it); per round of units (persistent CTAs:
// rounds = ceil(units / SMs)) a fill and epilogue (unit_rounds), with split-K its FP32 partial
// written (split_unit_rounds, and per 128 rows of M tile split_unit_rounds_x_rows), and the last
// split of each tile reading all partials (partial_reads_x_rows, per round of tiles); the A
// prepass per million elements of A and per call.
//
// Stream-K has no rounds: every worker runs at once, and the call lasts as long as the busiest
// worker - its K blocks at the same rate per block, and per piece (a tile's share it computes)
// the fill, epilogue and partial write of a split-K unit - plus the last arrivers' reads of
// their tiles' pieces. These are the split-K terms, not fitted again; checked against (split-K
// pick, stream-K) pairs timed side by side (tests/fixtures/sm90-fit/streamk.json; the outcome is
// in docs/kernels.md, stream-K).
//
// Two CTAs per SM (M tile 16, `per-sm 2`): each CTA's K block costs kTwoPerSmBlock times one
// CTA's alone, rounds are of twice the SM count, and a call costs kTwoPerSmCallUs more (its
// shallower B ring). Measured, not fitted: stream-K over twice the SM count against once on
// M = 16 shapes (docs/kernels.md, two CTAs per SM).
//
// The fp16 mainloop: persistent waves = ceil(units / SMs), each of (K blocks per unit) x (a rate
// per block, one per block and BN / 128, and one more for 256x128), plus a fill and epilogue per
// wave and BN / 128; split-K adds per wave a fixed cost and one per split and BN / 128 (FP32
// partials written and read back by the last split). The wider the tile, the more of each K
// block's fixed cost it amortises; the narrower, the more evenly the tiles fill the SMs (N = 576:
// four 144-wide tiles make 128 units at M = 4096). The two-phase path adds the decode pass (both
// operands: per million elements and per call), fitted together with the mainloop.
namespace {

// The terms, in the order of the coefficients below (one name each, as the fitter prints it).
enum FusedTerm {
  kBlock16, kBlock32, kBlock64, kBlock128, kBlock256,  // K blocks of the busiest CTA, per M tile
  kUnit,             // rounds of units (stream-K: the busiest worker's pieces)
  kSplitUnit,        // the same, when a unit writes a partial
  kSplitUnitRows,    // ... x M tile / 128
  kPartialRead,      // rounds of tiles x partials read per tile x M tile / 128
  kPrepassElements,  // millions of A elements the prepass decodes
  kPrepassCall,      // 1 per call
};
enum TwoPhaseTerm {
  kMainBlock,       // waves x K blocks per unit
  kMainBlockCols,   // ... x BN / 128 (2 for 256x128)
  kMainBlock256,    // ... for 256x128 only
  kMainWaveCols,    // waves x BN / 128
  kMainSplitWave,   // waves, with split-K
  kMainSplitCols,   // waves x split x BN / 128, with split-K
  kDecodeCall,      // 1 per call
  kDecodeElements,  // millions of A and B elements decoded
};
static_assert(kDecodeCall == kMainloopTerms);

constexpr const char* kFusedTermNames[kFusedTerms] = {
    "k_blocks_tile16", "k_blocks_tile32", "k_blocks_tile64", "k_blocks_tile128", "k_blocks_tile256",
    "unit_rounds", "split_unit_rounds", "split_unit_rounds_x_rows", "partial_reads_x_rows",
    "prepass_melements", "prepass_call"};
constexpr const char* kTwoPhaseTermNames[kTwoPhaseTerms] = {
    "wave_k_blocks", "wave_k_blocks_x_cols", "wave_k_blocks_256x128", "waves_x_cols",
    "split_waves", "split_waves_x_split_x_cols", "decode_call", "decode_melements"};

const CostModels kShipped = {
    {0.3903, 0.3973, 0.4043, 0.4931, 0.6584, 1.5241, 1.5683, 2.7772, 0.3455, 1.3209, 5.2477},
    {0.1006, 0.2456, 0.0116, 1.3809, 4.3835, 0.6133, 9.0692, 0.6691}};

constexpr double kTwoPerSmBlock = 1.72;
constexpr double kTwoPerSmCallUs = 1.7;

int block_term(int m_tile) {
  switch (m_tile) {
    case 16: return kBlock16;
    case 32: return kBlock32;
    case 64: return kBlock64;
    case 128: return kBlock128;
    default: return kBlock256;
  }
}

template <size_t N>
double dot(const std::array<double, N>& t, const std::array<double, N>& k, size_t n = N) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += t[i] * k[i];
  return sum;
}

}  // namespace

const CostModels& shipped_models() { return kShipped; }
const char* fused_term_name(int i) { return i >= 0 && i < kFusedTerms ? kFusedTermNames[i] : "?"; }
const char* two_phase_term_name(int i) { return i >= 0 && i < kTwoPhaseTerms ? kTwoPhaseTermNames[i] : "?"; }

FusedTerms fused_terms(const Shape& s, const FusedConfig& c, int sms) {
  FusedTerms t{};
  const FusedLayout w = fused_layout(s, c);
  const int nk = static_cast<int>(s.k / kGranuleK);
  const double rows = c.m_tile / 128.0;
  const int slots = std::max(1, sms) * c.per_sm;  // CTAs running at once
  int64_t blocks = 0;  // the busiest CTA's K blocks
  double units = 0.0;  // its rounds of units, or pieces
  bool partials = c.split > 1;
  if (c.workers > 0) {
    const int nq = static_cast<int>(ceil_div(nk, kFusedBStageKb));
    const int64_t quads = int64_t(w.tiles) * nq;
    int most_pieces = 0;
    for (int g = 0; g < c.workers; ++g) {
      const int64_t end = stream_k_start(g + 1, quads, c.workers);
      int64_t mine = 0;
      int pieces = 0;
      for (int64_t pos = stream_k_start(g, quads, c.workers); pos < end;) {
        const StreamKSegment seg = stream_k_segment(pos, end, g, quads, c.workers, nq);
        mine += std::min(nk, seg.q1 * kFusedBStageKb) - seg.q0 * kFusedBStageKb;
        ++pieces;
        pos += seg.q1 - seg.q0;
      }
      blocks = std::max(blocks, mine);
      most_pieces = std::max(most_pieces, pieces);
    }
    units = most_pieces;
    partials = true;  // every piece writes its partial, as a split-K unit does
    t[kPartialRead] = double(ceil_div(w.tiles, c.workers)) * w.slots * rows;
  } else {
    const int64_t rounds = ceil_div(int64_t(w.tiles) * c.split, slots);
    blocks = rounds * ceil_div(nk, c.split);
    units = double(rounds);
    if (partials) t[kPartialRead] = double(ceil_div(w.tiles, slots)) * c.split * rows;
  }
  t[block_term(c.m_tile)] = double(blocks) * (c.per_sm == 2 ? kTwoPerSmBlock : 1.0);
  t[kUnit] = units;
  if (partials) {
    t[kSplitUnit] = units;
    t[kSplitUnitRows] = units * rows;
  }
  t[kPrepassElements] = double(s.l) * double(s.m) * double(s.k) * 1e-6;
  t[kPrepassCall] = 1.0;
  return t;
}

TwoPhaseTerms two_phase_terms(const Shape& sh, const TwoPhaseConfig& c, int sms) {
  TwoPhaseTerms t{};
  if (!mainloop_tile_built(c.bm, c.bn)) return t;
  const int64_t nk = std::max<int64_t>(1, sh.k / 64);
  const int s = std::max(1, c.split);
  const int64_t tiles = sh.l * ceil_div(sh.m, c.bm) * ceil_div(sh.n, c.bn);
  const double w = c.bm == 256 ? 2.0 : c.bn / 128.0;
  const double waves = static_cast<double>(ceil_div(tiles * s, std::max(1, sms)));
  const double kb = static_cast<double>(ceil_div(nk, s));
  t[kMainBlock] = waves * kb;
  t[kMainBlockCols] = waves * kb * w;
  t[kMainBlock256] = c.bm == 256 ? waves * kb : 0.0;
  t[kMainWaveCols] = waves * w;
  if (s > 1) {
    t[kMainSplitWave] = waves;
    t[kMainSplitCols] = waves * s * w;
  }
  t[kDecodeCall] = 1.0;
  t[kDecodeElements] = double(sh.l) * double(sh.m + sh.n) * double(sh.k) * 1e-6;
  return t;
}

double estimate_fused_us(const Shape& s, const FusedConfig& c, int sms, const CostModels& m) {
  return dot(fused_terms(s, c, sms), m.fused) + (c.per_sm == 2 ? kTwoPerSmCallUs : 0.0);
}

double estimate_mainloop_us(const Shape& s, const TwoPhaseConfig& c, int sms, const CostModels& m) {
  if (!mainloop_tile_built(c.bm, c.bn)) return 1e300;
  return dot(two_phase_terms(s, c, sms), m.two_phase, kMainloopTerms);
}

double estimate_two_phase_us(const Shape& s, const TwoPhaseConfig& c, int sms, const CostModels& m) {
  if (!mainloop_tile_built(c.bm, c.bn)) return 1e300;
  return dot(two_phase_terms(s, c, sms), m.two_phase);
}

// The fused path weighs the smallest M tile that holds M (16 at least, 256 at most), half of
// it, and 256 above M = 128; splits 1-6, 8, 12 and 16 that divide K/64 into that many non-empty
// even shares, while the partials stay under 1 GiB; and for each tile stream-K over the SM count
// where the tiles fill fewer than all SMs in their last round and every worker gets a K quad;
// at M tile 16 the same again with two CTAs per SM (split-K where its units take more than one
// round of one CTA per SM). Preference on near-ties: the larger tile, the smaller split, one CTA
// per SM. The chooser weighs
// stream-K only where M <= kStreamKChosenMaxM (its estimate's checked range); elsewhere it is
// listed, and runs when pinned (--kernel-config).
std::vector<FusedConfig> fused_candidates(const Shape& s, int sms) {
  std::vector<FusedConfig> out;
  const int64_t nk = s.k / kGranuleK;
  int cover = 16;
  while (cover < 256 && cover < s.m) cover *= 2;
  for (int mt : kFusedTiles) {
    if (mt != cover && 2 * mt != cover && !(mt == 256 && s.m > 128)) continue;
    std::vector<int> splits;  // this tile's split-K candidates
    for (int split : kFusedSplits) {
      if (split > nk) break;
      Config c;
      c.path = Path::Fused;
      c.fused = {mt, split};
      c = normalize(s, c);
      if (c.fused.split != split) continue;
      if (fused_layout(s, c.fused).partial > (size_t(1) << 30)) break;
      out.push_back(c.fused);
      splits.push_back(split);
    }
    const int64_t tiles = fused_layout(s, FusedConfig{mt}).tiles;
    for (int per_sm = 1; per_sm <= 2; ++per_sm) {
      if (!fused_per_sm_built(mt, per_sm)) continue;
      const int slots = sms * per_sm;
      if (per_sm == 2)  // splits whose units take more than one round of one CTA per SM
        for (int split : splits)
          if (tiles * split > sms) out.push_back({mt, split, 0, 2});
      FusedConfig sk{mt, 1, slots, per_sm};
      const FusedLayout w = fused_layout(s, sk);
      const int64_t quads = int64_t(w.tiles) * ceil_div(nk, kFusedBStageKb);
      if (sms > 1 && w.tiles % slots != 0 && quads >= slots && w.partial <= (size_t(1) << 30)) out.push_back(sk);
    }
  }
  return out;
}

// The mainloop's tiles 128x256, 256x128, 128x128, then 128 x the other N steps; splits 1-4, 6, 8
// keeping >= 512 of K per split; 16 tile-rows per scheduler group when there are that many
// (measured faster than 8 on large shapes: docs/kernels.md, the two-phase path).
std::vector<TwoPhaseConfig> two_phase_candidates(const Shape& sh) {
  std::vector<std::pair<int, int>> tiles{{128, 256}, {256, 128}, {128, 128}};
  for (int bn = 16; bn <= 240; bn += 16)
    if (bn != 128) tiles.emplace_back(128, bn);
  const int64_t nk = std::max<int64_t>(1, sh.k / 64);
  std::vector<TwoPhaseConfig> out;
  for (const auto& [bm, bn] : tiles)
    for (int s : kMainloopSplits) {
      if (s > 1 && nk / s < 8) break;
      out.push_back({bm, bn, s, ceil_div(sh.m, bm) >= 16 ? 16 : 8});
    }
  return out;
}

namespace {

// Walks the fused candidates `take` accepts, in their order, replacing `best` (estimated at
// `best_t`) only with one at least 0.1 % cheaper: near-ties keep the earlier.
template <class Take>
void cheapest_fused(const Shape& s, int sms, const CostModels& m, Take take, FusedConfig& best,
                    double& best_t) {
  for (const FusedConfig& c : fused_candidates(s, sms)) {
    if (!take(c)) continue;
    const double t = estimate_fused_us(s, c, sms, m);
    if (t < best_t * 0.999) {
      best_t = t;
      best = c;
    }
  }
}

}  // namespace

FusedConfig choose_fused_split_k(const Shape& s, int sms, const CostModels& m) {
  FusedConfig best;
  double best_t = std::numeric_limits<double>::infinity();
  cheapest_fused(s, sms, m, [](const FusedConfig& c) { return c.workers == 0 && c.per_sm == 1; }, best, best_t);
  return best;
}

FusedConfig choose_fused(const Shape& s, int sms, const CostModels& m, bool two_per_sm) {
  FusedConfig best = choose_fused_split_k(s, sms, m);
  double best_t = estimate_fused_us(s, best, sms, m);
  if (s.m <= kStreamKChosenMaxM)
    cheapest_fused(s, sms, m, [](const FusedConfig& c) { return c.workers > 0 && c.per_sm == 1; }, best, best_t);
  if (two_per_sm)  // M tile 16 only, so M <= 32
    cheapest_fused(s, sms, m, [](const FusedConfig& c) { return c.per_sm == 2; }, best, best_t);
  return best;
}

TwoPhaseConfig choose_two_phase(const Shape& s, int sms, const CostModels& m) {
  TwoPhaseConfig best;
  double best_cost = 1e300;
  for (const TwoPhaseConfig& c : two_phase_candidates(s)) {
    const double cost = estimate_mainloop_us(s, c, sms, m);
    if (cost < best_cost * 0.99) {  // prefer fewer splits / earlier candidates on near-ties
      best_cost = cost;
      best = c;
    }
  }
  Config c;
  c.path = Path::TwoPhase;
  c.two_phase = best;
  return normalize(s, c).two_phase;
}

// The fused path decodes B (and reads the fp16 A) once per M tile and wins where few M tiles
// share B; the two-phase one pays one decode pass over A and B and then runs the fp16 mainloop
// at its full rate, which wins at large M, and at M = 1024 where its narrower tiles fill the SMs
// (N = 576, 1536).
StreamConfig stream_candidate(const Shape& s, int sms) {
  StreamConfig c;
  c.m_tile = s.m <= 8 ? 8 : s.m <= 16 ? 16 : 32;
  c.warps = stream_warps(c.m_tile);
  // one CTA an SM, fewer where there are fewer units than that many CTAs' warps (each CTA
  // decodes its slices of A and joins the grid's barrier: idle ones only cost)
  c.ctas = static_cast<int>(std::clamp<int64_t>(ceil_div(stream_units(s), int64_t(c.warps)), 1, std::max(1, sms)));
  if (!stream_shape_error(s, c).empty()) c.m_tile = 0;
  return c;
}

bool stream_chosen(const Shape& s, int sms) {
  if (s.m > kStreamChosenMaxM || s.l != 1 || stream_candidate(s, sms).m_tile == 0) return false;
  const double per_warp = double(stream_units(s)) / (double(std::max(1, sms)) * stream_warps(8));
  return per_warp >= kStreamChosenMinUnits && per_warp <= kStreamChosenMaxUnits;
}

Config choose_config(const Shape& s, int sms, Path path, const CostModels& m) {
  if (path == Path::Stream || (path == Path::Auto && stream_chosen(s, sms))) {
    Config st;
    st.path = Path::Stream;
    st.stream = stream_candidate(s, sms);
    if (st.stream.m_tile != 0 || path == Path::Stream) return st;
  }
  Config two;
  two.path = Path::TwoPhase;
  if (path == Path::TwoPhase) {
    two.two_phase = choose_two_phase(s, sms, m);
    return two;
  }
  Config fused;
  fused.path = Path::Fused;
  fused.fused = choose_fused(s, sms, m);
  if (path == Path::Fused) return fused;
  two.two_phase = choose_two_phase(s, sms, m);
  return estimate_two_phase_us(s, two.two_phase, sms, m) < estimate_fused_us(s, fused.fused, sms, m) ? two
                                                                                                     : fused;
}

std::vector<Config> configurations(const Shape& s, Path path, int sms) {
  std::vector<Config> out;
  if (path == Path::Auto || path == Path::Fused)
    for (const FusedConfig& f : fused_candidates(s, sms)) {
      Config c;
      c.path = Path::Fused;
      c.fused = f;
      out.push_back(c);
    }
  if (path == Path::Auto || path == Path::TwoPhase)
    for (const TwoPhaseConfig& t : two_phase_candidates(s)) {
      Config c;
      c.path = Path::TwoPhase;
      c.two_phase = t;
      out.push_back(normalize(s, c));  // the identity for these candidates
    }
  if (path == Path::Auto || path == Path::Stream) {
    Config c;
    c.path = Path::Stream;
    c.stream = stream_candidate(s, sms);
    if (c.stream.m_tile != 0) out.push_back(c);
  }
  return out;
}

std::string configuration_error(const Shape& s, Path path, const Config& c, int sms) {
  const std::string name = describe(c);
  if (path == Path::Fused && c.path != Path::Fused) return "this kernel runs the fused path only";
  if (path == Path::TwoPhase && c.path != Path::TwoPhase) return "this kernel runs the two-phase path only";
  for (const Config& x : configurations(s, c.path, sms))
    if (describe(x) == name) return {};
  const std::string at = fmt::format("{}x{}x{}", s.m, s.n, s.k);
  if (c.path == Path::Stream) {
    if (const std::string e = stream_shape_error(s, c.stream); !e.empty()) return e;
    const StreamConfig want = stream_candidate(s, sms);
    return fmt::format("the stream path runs {} here (the smallest M tile of 8, 16, 32 holding M = {}; one CTA an "
                       "SM of {}, or one per {} units where fewer), not {}",
                       describe(Config{Path::Stream, {}, {}, want}), s.m, sms, want.warps, name);
  }
  std::vector<int> tiles, splits;
  if (c.path == Path::Fused) {
    if (!fused_tile_built(c.fused.m_tile))
      return fmt::format("fused M tile {} is not built (16, 32, 64, 128, 256)", c.fused.m_tile);
    if (!fused_per_sm_built(c.fused.m_tile, c.fused.per_sm))
      return fmt::format("per-sm {} with M tile {}: {}", c.fused.per_sm, c.fused.m_tile, kFusedPerSmRule);
    bool stream_k = false;
    for (const FusedConfig& f : fused_candidates(s, sms)) {
      if (std::find(tiles.begin(), tiles.end(), f.m_tile) == tiles.end()) tiles.push_back(f.m_tile);
      if (f.m_tile == c.fused.m_tile && f.workers == 0 && f.per_sm == 1) splits.push_back(f.split);
      if (f.m_tile == c.fused.m_tile && f.workers > 0) stream_k = true;
    }
    if (splits.empty())
      return fmt::format("the fused path does not weigh M tile {} at {} (M tiles there: {})",
                         c.fused.m_tile, at, tiles.empty() ? "none" : join(tiles));
    const bool split_weighed = std::find(splits.begin(), splits.end(), c.fused.split) != splits.end();
    if (c.fused.per_sm == 2 && c.fused.workers == 0 && split_weighed)
      return fmt::format("the fused path weighs split {} per-sm 2 at {} only where its units ({} per split) "
                         "take more than one round of {} SMs",
                         c.fused.split, at, fused_layout(s, c.fused).tiles, sms);
    if (c.fused.workers > 0 && c.fused.per_sm == 2)
      return fmt::format("the fused path's stream-k per-sm 2 uses {} workers here (twice the SM count) where "
                         "its tiles leave CTAs idle, not {}",
                         2 * sms, c.fused.workers);
    if (c.fused.workers > 0)
      return stream_k ? fmt::format("the fused path's stream-k uses {} workers here (the SM count), not {}",
                                    sms, c.fused.workers)
                      : fmt::format("the fused path does not weigh stream-k at {} with M tile {} (its tiles "
                                    "fill whole rounds of {} SMs, or K has fewer quads than workers)",
                                    at, c.fused.m_tile, sms);
    return fmt::format("the fused path does not weigh split {} at {} with M tile {} (splits there: {})",
                       c.fused.split, at, c.fused.m_tile, join(splits));
  }
  const TwoPhaseConfig& t = c.two_phase;
  if (!mainloop_tile_built(t.bm, t.bn))
    return fmt::format("two-phase tile {}x{} is not built (128 x 16..256 in steps of 16, or 256x128)",
                       t.bm, t.bn);
  int group = 0;
  for (const TwoPhaseConfig& x : two_phase_candidates(s))
    if (x.bm == t.bm && x.bn == t.bn) {
      splits.push_back(x.split);
      group = x.group;
    }
  if (t.group != group)
    return fmt::format("the two-phase path uses group {} at {} with tile {}x{}, not {}", group, at,
                       t.bm, t.bn, t.group);
  return fmt::format("the two-phase path does not weigh split {} at {} (splits there: {}; K/64 >= 8 "
                     "per split)",
                     t.split, at, join(splits));
}

}  // namespace nvfp4::sm90
