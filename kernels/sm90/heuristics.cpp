// The sm90 cost models and choosers (heuristics.hpp). Both models are fitted to one H200's
// timings of every configuration its chooser weighs (tests/fixtures/sm90-fit/, remade by the
// sweep docs/kernels.md names): relative least squares over the configurations within 1.5x of
// each shape's fastest.
#include "kernels/sm90/heuristics.hpp"

#include "kernels/sm90/stream_k.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace nvfp4::sm90 {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int kFusedTiles[] = {256, 128, 64, 32, 16};
constexpr int kFusedSplits[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};
constexpr int kMainloopSplits[] = {1, 2, 3, 4, 6, 8};

std::string join(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

}  // namespace

// Fused path, 132 SMs: a CTA spends per 64-wide K block of its unit 0.390 / 0.397 / 0.404 /
// 0.493 / 0.658 us for M tiles 16 / 32 / 64 / 128 / 256 (32 interpolated: not measured); per
// round of units (persistent CTAs: rounds = ceil(units / SMs)) 1.52 us of fill and epilogue,
// with split-K 1.57 us + 2.78 us per 128 rows of M tile more (its FP32 partial written), and the
// last split of a tile reads all partials (0.35 us per split per 128 rows, per round of tiles);
// the A prepass costs 1.32 us per million elements of A, and 5.25 us per call.
//
// Stream-K has no rounds: every worker runs at once, and the call lasts as long as the busiest
// worker - its K blocks at the same rate per block, and per piece (a tile's share it computes)
// the fill, epilogue and partial write of a split-K unit - plus the last arrivers' reads of
// their tiles' pieces. These are the split-K terms, not fitted again: against 32 pairs of
// (split-K pick, stream-K) timed side by side on one H200 (tests/fixtures/sm90-fit/streamk.json)
// the lower estimate is the faster of the pair on 31 and 1.6 % slower on the last.
namespace {

double fused_block_us(int m_tile) {
  switch (m_tile) {
    case 16: return 0.3903;
    case 32: return 0.3973;
    case 64: return 0.4043;
    case 128: return 0.4931;
    default: return 0.6584;
  }
}

double prepass_us(const Shape& s) { return 1.3209 * double(s.l) * double(s.m) * double(s.k) * 1e-6 + 5.2477; }

double stream_k_us(const Shape& s, const FusedConfig& c) {
  const FusedLayout w = fused_layout(s, c);
  const int nk = static_cast<int>(s.k / kGranuleK);
  const int nq = static_cast<int>(ceil_div(nk, kFusedBStageKb));
  const int64_t quads = int64_t(w.tiles) * nq;
  int64_t most_blocks = 0;
  int most_pieces = 0;
  for (int g = 0; g < c.workers; ++g) {
    const int64_t end = stream_k_start(g + 1, quads, c.workers);
    int64_t blocks = 0;
    int pieces = 0;
    for (int64_t pos = stream_k_start(g, quads, c.workers); pos < end;) {
      const StreamKSegment seg = stream_k_segment(pos, end, g, quads, c.workers, nq);
      blocks += std::min(nk, seg.q1 * kFusedBStageKb) - seg.q0 * kFusedBStageKb;
      ++pieces;
      pos += seg.q1 - seg.q0;
    }
    most_blocks = std::max(most_blocks, blocks);
    most_pieces = std::max(most_pieces, pieces);
  }
  const double rows = c.m_tile / 128.0;
  return double(most_blocks) * fused_block_us(c.m_tile) + most_pieces * (1.5241 + 1.5683 + 2.7772 * rows) +
         0.3455 * double(ceil_div(w.tiles, c.workers)) * w.slots * rows + prepass_us(s);
}

}  // namespace

double estimate_fused_us(const Shape& s, const FusedConfig& c, int sms) {
  if (c.workers > 0) return stream_k_us(s, c);
  const double block_us = fused_block_us(c.m_tile);
  const int64_t nk = s.k / kGranuleK;
  const int64_t tiles = fused_layout(s, c).tiles;
  const int64_t rounds = ceil_div(tiles * c.split, std::max(1, sms));
  const bool sk = c.split > 1;
  double t = double(rounds) * (double(ceil_div(nk, c.split)) * block_us + 1.5241 +
                               (sk ? 1.5683 + 2.7772 * c.m_tile / 128.0 : 0.0));
  if (sk) t += 0.3455 * double(ceil_div(tiles, std::max(1, sms))) * c.split * c.m_tile / 128.0;
  return t + prepass_us(s);
}

// The fp16 mainloop, 132 SMs: persistent waves = ceil(units / SMs), each of (k-blocks per unit)
// x (0.101 + 0.246 w) us, w = BN / 128 (2 for 256x128, +0.012 us per k-block), plus 1.38 w us of
// fill and epilogue per wave; split-K adds per wave 4.38 us + 0.613 s w us (FP32 partials
// written and read back by the last split). The wider the tile, the more of each k-block's fixed
// cost it amortises; the narrower, the more evenly the tiles fill the SMs (N = 576: four
// 144-wide tiles make 128 units at M = 4096).
double estimate_mainloop_us(const Shape& sh, const TwoPhaseConfig& c, int sms) {
  if (!mainloop_tile_built(c.bm, c.bn)) return 1e300;
  const int64_t nk = std::max<int64_t>(1, sh.k / 64);
  const int s = std::max(1, c.split);
  const int64_t tiles = sh.l * ceil_div(sh.m, c.bm) * ceil_div(sh.n, c.bn);
  const double w = c.bm == 256 ? 2.0 : c.bn / 128.0;
  const double waves = static_cast<double>(ceil_div(tiles * s, std::max(1, sms)));
  const double kb = static_cast<double>(ceil_div(nk, s));
  double t = waves * kb * (0.1006 + 0.2456 * w + (c.bm == 256 ? 0.0116 : 0.0)) + waves * w * 1.3809;
  if (s > 1) t += waves * (4.3835 + 0.6133 * s * w);
  return t;
}

// The decode pass (both operands, 0.669 us per million elements, 9.07 us per call with the
// launches) plus the mainloop, fitted together.
double estimate_two_phase_us(const Shape& s, const TwoPhaseConfig& c, int sms) {
  return 9.0692 + 0.6691 * double(s.l) * double(s.m + s.n) * double(s.k) * 1e-6 +
         estimate_mainloop_us(s, c, sms);
}

// The fused path weighs the smallest M tile that holds M (16 at least, 256 at most), half of
// it, and 256 above M = 128; splits 1-6, 8, 12 and 16 that divide K/64 into that many non-empty
// even shares, while the partials stay under 1 GiB; and for each tile stream-K over the SM
// count where the tiles fill fewer than all SMs in their last round and every worker gets a
// K quad. Preference on near-ties: the larger tile, the smaller split. The chooser weighs
// stream-K only where M <= kStreamKChosenMaxM (its estimate's checked range); elsewhere it is
// listed, and runs when pinned (--kernel-config).
std::vector<FusedConfig> fused_candidates(const Shape& s, int sms) {
  std::vector<FusedConfig> out;
  const int64_t nk = s.k / kGranuleK;
  int cover = 16;
  while (cover < 256 && cover < s.m) cover *= 2;
  for (int mt : kFusedTiles) {
    if (mt != cover && 2 * mt != cover && !(mt == 256 && s.m > 128)) continue;
    for (int split : kFusedSplits) {
      if (split > nk) break;
      Config c;
      c.path = Path::Fused;
      c.fused = {mt, split};
      c = normalize(s, c);
      if (c.fused.split != split) continue;
      if (fused_layout(s, c.fused).partial > (size_t(1) << 30)) break;
      out.push_back(c.fused);
    }
    FusedConfig sk{mt, 1, sms};
    const FusedLayout w = fused_layout(s, sk);
    const int64_t quads = int64_t(w.tiles) * ceil_div(nk, kFusedBStageKb);
    if (sms > 1 && w.tiles % sms != 0 && quads >= sms && w.partial <= (size_t(1) << 30)) out.push_back(sk);
  }
  return out;
}

// The mainloop's tiles 128x256, 256x128, 128x128, then 128 x the other N steps; splits 1-4, 6, 8
// keeping >= 512 of K per split; 16 tile-rows per scheduler group when there are that many
// (measured 1-2.5 % faster than 8 at 4096^3 / 8192^3).
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
void cheapest_fused(const Shape& s, int sms, Take take, FusedConfig& best, double& best_t) {
  for (const FusedConfig& c : fused_candidates(s, sms)) {
    if (!take(c)) continue;
    const double t = estimate_fused_us(s, c, sms);
    if (t < best_t * 0.999) {
      best_t = t;
      best = c;
    }
  }
}

}  // namespace

FusedConfig choose_fused_split_k(const Shape& s, int sms) {
  FusedConfig best;
  double best_t = std::numeric_limits<double>::infinity();
  cheapest_fused(s, sms, [](const FusedConfig& c) { return c.workers == 0; }, best, best_t);
  return best;
}

FusedConfig choose_fused(const Shape& s, int sms) {
  FusedConfig best = choose_fused_split_k(s, sms);
  if (s.m > kStreamKChosenMaxM) return best;
  double best_t = estimate_fused_us(s, best, sms);
  cheapest_fused(s, sms, [](const FusedConfig& c) { return c.workers > 0; }, best, best_t);
  return best;
}

TwoPhaseConfig choose_two_phase(const Shape& s, int sms) {
  TwoPhaseConfig best;
  double best_cost = 1e300;
  for (const TwoPhaseConfig& c : two_phase_candidates(s)) {
    const double cost = estimate_mainloop_us(s, c, sms);
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
Config choose_config(const Shape& s, int sms, Path path) {
  Config two;
  two.path = Path::TwoPhase;
  if (path == Path::TwoPhase) {
    two.two_phase = choose_two_phase(s, sms);
    return two;
  }
  Config fused;
  fused.path = Path::Fused;
  fused.fused = choose_fused(s, sms);
  if (path == Path::Fused) return fused;
  two.two_phase = choose_two_phase(s, sms);
  return estimate_two_phase_us(s, two.two_phase, sms) < estimate_fused_us(s, fused.fused, sms) ? two
                                                                                              : fused;
}

std::vector<Config> configurations(const Shape& s, Path path, int sms) {
  std::vector<Config> out;
  if (path != Path::TwoPhase)
    for (const FusedConfig& f : fused_candidates(s, sms)) {
      Config c;
      c.path = Path::Fused;
      c.fused = f;
      out.push_back(c);
    }
  if (path != Path::Fused)
    for (const TwoPhaseConfig& t : two_phase_candidates(s)) {
      Config c;
      c.path = Path::TwoPhase;
      c.two_phase = t;
      out.push_back(normalize(s, c));  // the identity for these candidates
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
  std::vector<int> tiles, splits;
  if (c.path == Path::Fused) {
    if (!fused_tile_built(c.fused.m_tile))
      return fmt::format("fused M tile {} is not built (16, 32, 64, 128, 256)", c.fused.m_tile);
    bool stream_k = false;
    for (const FusedConfig& f : fused_candidates(s, sms)) {
      if (std::find(tiles.begin(), tiles.end(), f.m_tile) == tiles.end()) tiles.push_back(f.m_tile);
      if (f.m_tile == c.fused.m_tile && f.workers == 0) splits.push_back(f.split);
      if (f.m_tile == c.fused.m_tile && f.workers > 0) stream_k = true;
    }
    if (splits.empty())
      return fmt::format("the fused path does not weigh M tile {} at {} (M tiles there: {})",
                         c.fused.m_tile, at, tiles.empty() ? "none" : join(tiles));
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
