// The sm90 configurations: layouts, normalisation, spelling (config.hpp). Pure host C++.
#include "kernels/sm90/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include "kernels/sm90/stream_k.hpp"
#include "kernels/sm90/stream_plan.hpp"
#include "src/core/arith.hpp"
#include "src/core/error.hpp"

namespace nvfp4::sm90 {
bool fused_tile_built(int m_tile) {
  return m_tile == 16 || m_tile == 32 || m_tile == 64 || m_tile == 128 || m_tile == 256;
}

bool fused_per_sm_built(int m_tile, int per_sm) { return per_sm == 1 || (per_sm == 2 && m_tile == 16); }

bool mainloop_tile_built(int bm, int bn) {
  return (bm == 128 && bn % 16 == 0 && bn >= 16 && bn <= 256) || (bm == 256 && bn == 128);
}

FusedLayout fused_layout(const Shape& s, const FusedConfig& c) {
  FusedLayout w;
  w.tiles_m = static_cast<int>(ceil_div(s.m, c.m_tile));
  w.tiles128 = c.m_tile >= 128 ? w.tiles_m * (c.m_tile / 128) : static_cast<int>(ceil_div(s.m, 128));
  w.tiles_n = static_cast<int>(ceil_div(s.n, kFusedRowsN));
  w.tiles = static_cast<int>(s.l * w.tiles_m * w.tiles_n);
  w.a16 = size_t(s.l) * size_t(w.tiles128) * size_t(s.k / kGranuleK) * kFusedATile;
  const int nq = static_cast<int>(ceil_div(s.k / kGranuleK, kFusedBStageKb));
  w.slots = c.workers > 0 ? stream_k_slots(w.tiles, nq, c.workers) : c.split;
  if (w.slots <= 1) w.slots = 0;
  w.partial = size_t(w.tiles) * size_t(w.slots) * size_t(kFusedRowsN) * size_t(c.m_tile) * 4;
  w.counters = w.slots > 0 ? size_t(w.tiles) * 4 : 0;
  w.total = round_up(w.a16, 256) + round_up(w.partial, 256) + round_up(w.counters, 256);
  return w;
}

FusedWalk fused_walk(const Shape& s, const FusedConfig& c, int sm_count) {
  const FusedLayout l = fused_layout(s, c);
  FusedWalk w;
  w.tiles_m = l.tiles_m;
  w.tiles_n = l.tiles_n;
  w.nk = static_cast<int>(s.k / kGranuleK);
  w.split = c.split;
  const int64_t units = int64_t(l.tiles) * c.split;
  if (units > std::numeric_limits<int32_t>::max() / 2)
    throw usage_error("sm90: too many fused work units for this shape");
  w.units = static_cast<int>(units);
  w.nq = static_cast<int>((w.nk + kFusedBStageKb - 1) / kFusedBStageKb);
  w.workers = c.workers;
  w.wq = int64_t(l.tiles) * w.nq;
  if (c.workers > 0 && w.wq < c.workers)
    throw usage_error(fmt::format("sm90: stream-k {} needs at least as many K quads as workers ({} here)",
                                  c.workers, w.wq));
  w.grid = c.workers > 0 ? c.workers : static_cast<int>(std::min<int64_t>(units, int64_t(c.per_sm) * sm_count));
  return w;
}

size_t mainloop_workspace_bytes(const Shape& s, const TwoPhaseConfig& c) {
  const int splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(c.split, s.k / 64)));
  if (splits <= 1 || !mainloop_tile_built(c.bm, c.bn)) return 0;
  const int64_t tiles = s.l * ceil_div(s.m, c.bm) * ceil_div(s.n, c.bn);
  return round_up(static_cast<size_t>(tiles * splits) * c.bm * c.bn * sizeof(float), 256) +
         round_up(static_cast<size_t>(tiles) * sizeof(int), 256);
}

TwoPhaseLayout two_phase_layout(const Shape& s, const TwoPhaseConfig& c) {
  TwoPhaseLayout w;
  w.a16 = round_up(size_t(s.l) * size_t(s.m) * size_t(s.k) * 2, 256);  // fp16
  w.b16 = round_up(size_t(s.l) * size_t(s.n) * size_t(s.k) * 2, 256);
  w.mainloop = round_up(mainloop_workspace_bytes(s, c), 256);
  w.total = w.a16 + w.b16 + w.mainloop;
  return w;
}

std::string shape_error(const Shape& s) {
  if (s.k % kGranuleK != 0)
    return fmt::format("K must be a multiple of {} (the sm90 kernel's K granule)", kGranuleK);
  if (s.l > 65535) return "L must be at most 65535 (grid z limit)";
  if (s.m > std::numeric_limits<int32_t>::max() || s.n > std::numeric_limits<int32_t>::max())
    return "M and N must be below 2^31";
  if (ceil_div(s.m, 128) * ceil_div(s.n, 128) > std::numeric_limits<int32_t>::max())
    return "too many 128x128 tiles for one grid";
  return {};
}

bool stream_tile_built(int m_tile) { return m_tile == 8 || m_tile == 16 || m_tile == 32; }

namespace {

// Shared memory of a streaming CTA: the A slab (per slice group, 4 K blocks of m_tile rows x 4
// lanes x 32 bytes: the lanes' mma B-operand registers) and two boundary partials a warp (16 x
// m_tile FP32 each) with their panel-slice tags.
size_t stream_slab_group_bytes(int m_tile) { return size_t(4) * m_tile * 128; }
size_t stream_entries_bytes(const StreamConfig& c) {
  return size_t(c.warps) * 2 * (size_t(kStreamPanelRows) * c.m_tile * 4 + 8);
}
// Slices one CTA's units span, at most.
int stream_slab_slices(const StreamPlan& p) {
  int most = 0;
  for (int b = 0; b < p.ctas; ++b) {
    const int64_t lo = stream_cta_start(p, b), hi = stream_cta_start(p, b + 1);
    if (hi > lo) most = std::max(most, static_cast<int>((hi - 1) / p.per_z - lo / p.per_z + 1));
  }
  return most;
}

StreamPlan stream_plan_for(const Shape& s, const StreamConfig& c, int slice_groups) {
  StreamPlan p;
  p.panels = static_cast<int>(ceil_div(s.n, kStreamPanelRows));
  p.slice_groups = slice_groups;
  p.slices = static_cast<int>(s.k / kStreamGroupK / slice_groups);
  p.per_z = int64_t(p.panels) * slice_groups;
  p.units = s.l * p.slices * p.per_z;
  p.ctas = c.ctas;
  p.warps = c.warps;
  p.slots = p.units > 0 ? stream_slots(p.units, slice_groups, c.ctas) : 1;
  return p;
}

}  // namespace

int64_t stream_units(const Shape& s) {
  return s.l * ceil_div(s.n, int64_t(kStreamPanelRows)) * std::max<int64_t>(1, s.k / kStreamGroupK);
}

StreamPlan stream_plan(const Shape& s, const StreamConfig& c, const StreamLayout& w) {
  return stream_plan_for(s, c, std::max(1, w.slice_groups));
}
StreamPlan stream_plan(const Shape& s, const StreamConfig& c) { return stream_plan(s, c, stream_layout(s, c)); }

// The slice is the largest divisor of K / 256 up to 64 KB of slab (128 / m_tile groups) whose
// slab, for the slices one CTA spans, fits in shared memory beside the warps' partials.
StreamLayout stream_layout(const Shape& s, const StreamConfig& c) {
  StreamLayout w;
  if (!stream_tile_built(c.m_tile) || c.ctas <= 0 || c.warps <= 0 || s.k % kStreamGroupK != 0 || s.k <= 0 ||
      s.n <= 0 || s.l <= 0)
    return w;
  const int groups = static_cast<int>(s.k / kStreamGroupK);
  for (int gs = std::min(groups, 128 / c.m_tile); gs >= 1; --gs) {
    if (groups % gs != 0) continue;
    const StreamPlan p = stream_plan_for(s, c, gs);
    const int slab = stream_slab_slices(p);
    const size_t smem = size_t(slab) * gs * stream_slab_group_bytes(c.m_tile) + stream_entries_bytes(c);
    if (smem > kStreamSmemLimit && gs > 1) continue;
    w.panels = s.l * p.panels;
    w.slices = p.slices;
    w.slice_groups = gs;
    w.slots = p.slots;
    w.slab_slices = slab;
    w.units = p.units;
    w.smem = smem;
    break;
  }
  const int64_t panel_slices = w.panels * w.slices;
  w.partial = size_t(panel_slices) * size_t(w.slots) * kStreamPanelRows * size_t(c.m_tile) * 4;
  w.total = round_up(w.partial, 256);
  return w;
}

std::string stream_shape_error(const Shape& s, const StreamConfig& c, const StreamLayout* layout) {
  if (!stream_tile_built(c.m_tile)) return fmt::format("stream M tile {} is not built (8, 16, 32)", c.m_tile);
  if (c.warps != stream_warps(c.m_tile))
    return fmt::format("stream warps {} is not built with M tile {} ({})", c.warps, c.m_tile, stream_warps(c.m_tile));
  if (c.ctas < 1) return "stream needs at least one CTA";
  if (c.ctas > kStreamMaxCtas)
    return fmt::format("stream ctas {} is over {} (one CTA an SM; the final sums' counts are 32-bit)", c.ctas,
                       kStreamMaxCtas);
  if (s.k % kStreamGroupK != 0)
    return fmt::format("the stream path needs K a multiple of {} (its unit's K), got {}", kStreamGroupK, s.k);
  if (s.m > c.m_tile)
    return fmt::format("the stream path's M tile {} holds M <= {}, got M = {}", c.m_tile, c.m_tile, s.m);
  if (s.k >= (int64_t(1) << 28)) return "the stream path needs K below 2^28 (8 rows of codes in 32-bit offsets)";
  const StreamLayout w = layout ? *layout : stream_layout(s, c);
  if (w.units >= (int64_t(1) << 31))
    return fmt::format("the stream path needs fewer than 2^31 units (L x N/16 x K/256), got {}", w.units);
  if (w.smem > kStreamSmemLimit)
    return fmt::format("the stream path's A slab and partials need {} bytes of shared memory a CTA here, over {}",
                       w.smem, kStreamSmemLimit);
  return {};
}

Config normalize(const Shape& s, Config c) {
  if (c.path == Path::Stream) return c;
  const int64_t nk = std::max<int64_t>(1, s.k / kGranuleK);
  if (c.path != Path::TwoPhase && c.fused.workers > 0) {
    c.fused.split = 1;  // stream-K: the workers share K
    return c;
  }
  int& split = c.path == Path::TwoPhase ? c.two_phase.split : c.fused.split;
  split = static_cast<int>(std::clamp<int64_t>(split, 1, std::min<int64_t>(nk, kMaxSplit)));
  split = static_cast<int>(ceil_div(nk, ceil_div(nk, split)));
  return c;
}

size_t workspace_bytes(const Shape& s, const Config& c0) {
  const Config c = normalize(s, c0);
  if (c.path == Path::Stream) return stream_layout(s, c.stream).total;
  if (c.path == Path::TwoPhase) return two_phase_layout(s, c.two_phase).total;
  return fused_layout(s, c.fused).total;
}

std::string describe(const Config& c) {
  if (c.path == Path::Stream)
    return fmt::format("stream {}x{} ctas {} warps {}", c.stream.m_tile, kStreamPanelRows, c.stream.ctas,
                       c.stream.warps);
  if (c.path == Path::TwoPhase)
    return fmt::format("two-phase {}x{} split {} group {}", c.two_phase.bm, c.two_phase.bn,
                       c.two_phase.split, c.two_phase.group);
  const std::string per_sm = c.fused.per_sm != 1 ? fmt::format(" per-sm {}", c.fused.per_sm) : "";
  if (c.fused.workers > 0)
    return fmt::format("fused {}x{} stream-k {}{}", c.fused.m_tile, kFusedRowsN, c.fused.workers, per_sm);
  return fmt::format("fused {}x{} split {}{}", c.fused.m_tile, kFusedRowsN, c.fused.split, per_sm);
}

namespace {

// A positive decimal integer of at most 6 digits (no sign, no leading zero).
bool parse_count(const std::string& t, int* out) {
  if (t.empty() || t.size() > 6 || t[0] == '0') return false;
  if (!std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return false;
  *out = std::stoi(t);
  return true;
}

bool parse_tile(const std::string& t, int* rows, int* cols) {
  const size_t x = t.find('x');
  return x != std::string::npos && parse_count(t.substr(0, x), rows) &&
         parse_count(t.substr(x + 1), cols);
}

}  // namespace

std::string parse_config(const std::string& text, Config* out) {
  static const char* kForms =
      "expected 'fused MTx128 split S', 'fused MTx128 stream-k W' (either optionally followed by 'per-sm 2') "
      "or 'two-phase BMxBN split S group G' (e.g. 'fused 128x128 split 2', 'fused 128x128 stream-k 132', "
      "'fused 16x128 stream-k 264 per-sm 2', 'two-phase 128x144 split 1 group 16') "
      "or 'stream MTx16 ctas C warps W' (e.g. 'stream 16x16 ctas 132 warps 16')";
  std::istringstream in(text);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  Config c;
  int rows = 0, cols = 0;
  // optional words after 'stream-k W' or 'split S': 'per-sm 2'
  constexpr size_t per_at = 4;
  if ((w.size() == per_at || (w.size() == per_at + 2 && w[per_at] == "per-sm")) && w[0] == "fused" &&
      (w[2] == "split" || w[2] == "stream-k")) {
    if (!parse_tile(w[1], &rows, &cols)) return fmt::format("tile '{}' is not ROWSxCOLS", w[1]);
    if (cols != kFusedRowsN)
      return fmt::format("the fused path's tile is MTx{}, got {}", kFusedRowsN, w[1]);
    if (w[2] == "split" && !parse_count(w[3], &c.fused.split))
      return fmt::format("split '{}' is not a positive count", w[3]);
    if (w[2] == "stream-k" && !parse_count(w[3], &c.fused.workers))
      return fmt::format("stream-k workers '{}' is not a positive count", w[3]);
    if (w.size() == per_at + 2 && (!parse_count(w[per_at + 1], &c.fused.per_sm) || c.fused.per_sm != 2))
      return fmt::format("per-sm '{}' is not 2 (one CTA per SM is spelt without 'per-sm')", w[per_at + 1]);
    c.path = Path::Fused;
    c.fused.m_tile = rows;
  } else if (w.size() == 6 && w[0] == "two-phase" && w[2] == "split" && w[4] == "group") {
    if (!parse_tile(w[1], &rows, &cols)) return fmt::format("tile '{}' is not ROWSxCOLS", w[1]);
    if (!parse_count(w[3], &c.two_phase.split)) return fmt::format("split '{}' is not a positive count", w[3]);
    if (!parse_count(w[5], &c.two_phase.group)) return fmt::format("group '{}' is not a positive count", w[5]);
    c.path = Path::TwoPhase;
    c.two_phase.bm = rows;
    c.two_phase.bn = cols;
  } else if (w.size() == 6 && w[0] == "stream" && w[2] == "ctas" && w[4] == "warps") {
    if (!parse_tile(w[1], &rows, &cols)) return fmt::format("tile '{}' is not ROWSxCOLS", w[1]);
    if (cols != kStreamPanelRows)
      return fmt::format("the stream path's tile is MTx{}, got {}", kStreamPanelRows, w[1]);
    if (!parse_count(w[3], &c.stream.ctas)) return fmt::format("ctas '{}' is not a positive count", w[3]);
    if (!parse_count(w[5], &c.stream.warps)) return fmt::format("warps '{}' is not a positive count", w[5]);
    c.path = Path::Stream;
    c.stream.m_tile = rows;
  } else {
    return kForms;
  }
  if (describe(c) != text) return fmt::format("not spelt as the kernel spells it: {}", kForms);
  *out = c;
  return {};
}

}  // namespace nvfp4::sm90
