// The streaming path's work split (one definition, host and device: stream_kernel.cuh walks it,
// config.cpp sizes the workspace and shared memory from it, tests/unit/sm90_stream_plan_test.cpp
// checks it covers every (B row, K block) once).
//
// A unit is one 16-row panel of B by one group of kStreamGroupK = 256 K (4 K blocks). Units are
// ordered (z, panel, group in slice), z = batch x slices + slice: a slice is `slice_groups`
// consecutive groups of one batch, so that the CTAs, whose ranges are contiguous, each touch one
// or two slices of A (the per-CTA shared slab). Warp w of all W = ctas x warps gets the units
// [w U / W, (w + 1) U / W) (stream_k_start): warp-granular stream-K, equal work for every warp;
// CTA b's warps together hold [b U / ctas, (b + 1) U / ctas), the same split at CTA granularity.
//
// A panel-slice (a panel's units of one slice) is summed in pieces: within a CTA its warps' parts
// in shared memory in warp order, then the CTAs' pieces - one per CTA that touches it, in slot
// j = CTA - first CTA - after the grid's barrier by the CTA whose share of the panels holds it, in
// (slice, slot) order. The sum's order depends on the shape and configuration only, so results
// are bit-reproducible.
#pragma once

#include <cstdint>

#include "kernels/sm90/stream_k.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4::sm90 {

constexpr int kStreamPanelRows = 16;  // B rows a unit (the mma's M)

struct StreamPlan {
  int64_t units = 0;     // L x slices x panels x slice_groups
  int64_t per_z = 0;     // units of one (batch, slice): panels x slice_groups
  int panels = 0;        // ceil(N / 16), per batch
  int slice_groups = 1;  // groups of 256 K a slice
  int slices = 0;        // slices a batch
  int ctas = 1, warps = 1;
  int slots = 1;         // CTAs one panel-slice can have pieces from, at most
};

// a / b for 0 <= a, 0 < b, in 32 bits where both fit (a 64-bit division is a long subroutine on
// the GPU; the kernel's final sums divide a few times a piece).
NVFP4_HD int64_t stream_div(int64_t a, int64_t b) {
  if (((a | b) >> 32) == 0) return static_cast<int64_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  return a / b;
}

// The CTA whose range holds unit `pos` (0 <= pos < units): the largest b with start(b) <= pos,
// empty ranges (more CTAs than units) skipped. That is floor(x / units) for x = (pos + 1) ctas - 1;
// the quotient is below ctas, so a float estimate is off by at most one and two compares make it
// exact - the final sums find a piece's owners this way, where an integer division would be a
// long instruction sequence (64 bits: a subroutine).
NVFP4_HD int64_t stream_owner(int64_t pos, int64_t units, int64_t ctas) {
  const int64_t x = (pos + 1) * ctas - 1;
#ifdef __CUDA_ARCH__
  int64_t q = __float2ll_rz(__fdividef(static_cast<float>(x), static_cast<float>(units)));
#else
  int64_t q = static_cast<int64_t>(static_cast<float>(x) / static_cast<float>(units));
#endif
  while (q > 0 && q * units > x) --q;
  while ((q + 1) * units <= x) ++q;
  return q;
}

// Whether every CTA holds at least one unit (the CTAs are at most the units): then every CTA from
// a panel-slice's first owner to its last holds part of it, and the final sums need not test.
NVFP4_HD bool stream_ctas_all_hold_units(const StreamPlan& p) { return p.units >= p.ctas; }

// Whether CTA `cta` holds a unit where some do not (fewer units than CTAs): start(cta) <
// start(cta + 1), in 32 bits, since cta x units < ctas^2 < 2^32 there (ctas < 2^16:
// stream_shape_error). A CTA strictly between a panel-slice's first and last owner holds part of
// it exactly when it holds a unit.
NVFP4_HD bool stream_cta_holds_units(const StreamPlan& p, int64_t cta) {
  const uint32_t u = static_cast<uint32_t>(p.units), c = static_cast<uint32_t>(p.ctas), b = static_cast<uint32_t>(cta);
  return b * u / c != (b + 1) * u / c;
}

// The first unit of CTA `cta` and of warp `gw` (of all ctas x warps): stream_k_start's split.
NVFP4_HD int64_t stream_cta_start(const StreamPlan& p, int64_t cta) { return stream_div(cta * p.units, p.ctas); }
NVFP4_HD int64_t stream_warp_start(const StreamPlan& p, int64_t gw) {
  return stream_div(gw * p.units, int64_t(p.ctas) * p.warps);
}

// Slots a panel-slice needs at most: the owners of its first and last unit are at most
// floor((slice_groups - 1) x ctas / units) + 1 apart (stream_owner), never more than the CTAs.
NVFP4_HD int stream_slots(int64_t units, int slice_groups, int ctas) {
  const int64_t apart = (int64_t(slice_groups - 1) * ctas) / units + 2;
  return static_cast<int>(apart < ctas ? apart : ctas);
}

// Units [lo, hi) of CTA `cta` that fall in panel-slice ps (none: hi <= lo).
struct StreamSpan {
  int64_t lo, hi;
};
NVFP4_HD StreamSpan stream_cta_part(const StreamPlan& p, int64_t ps, int64_t cta) {
  const int64_t a = ps * p.slice_groups, b = a + p.slice_groups;
  const int64_t s0 = stream_cta_start(p, cta), s1 = stream_cta_start(p, cta + 1);
  return {s0 > a ? s0 : a, s1 < b ? s1 : b};
}

// The panel (batch x panels + panel) of panel-slice ps, and the panel-slice of slice s of a panel.
NVFP4_HD int64_t stream_panel_of(const StreamPlan& p, int64_t ps) {
  const int64_t z = stream_div(ps, p.panels);
  return stream_div(z, p.slices) * p.panels + (ps - z * p.panels);
}
NVFP4_HD int64_t stream_panel_slice(const StreamPlan& p, int64_t panel, int s) {
  const int64_t batch = stream_div(panel, p.panels);
  return (batch * p.slices + s) * p.panels + (panel - batch * p.panels);
}

// The pieces of one panel in the final sum's order, (slice, slot) (stream_kernel.cuh, finish_panel):
// next() moves to the next piece (false past the last, and on every call after); piece() is its
// index in the workspace (panel-slice x slots + slot). A slice costs two owner estimates, a piece
// a compare and an add; where every CTA holds units the pieces of a panel-slice are the slots
// 0 .. last - first owner, else the empty CTAs between are skipped.
struct StreamPieceWalk {
  const StreamPlan& p;
  int s = -1;                             // slice
  int64_t pss = 0, f = 0, l = -1, b = 0;  // panel-slice, its first and last owner, the CTA next
  int64_t cta = 0;                        // the piece's CTA
  NVFP4_HD StreamPieceWalk(const StreamPlan& plan, int64_t panel)
      : p(plan), pss(stream_panel_slice(plan, panel, 0) - plan.panels) {}  // a panel's slices: panels apart
  NVFP4_HD bool next() {
    const int gs = p.slice_groups;
    for (;;) {
      if (b > l) {
        if (s + 1 >= p.slices) return false;
        ++s;
        pss += p.panels;
        f = stream_owner(pss * gs, p.units, p.ctas);
        l = stream_owner(pss * gs + gs - 1, p.units, p.ctas);
        b = f;
      }
      cta = b++;
      if (stream_ctas_all_hold_units(p) || stream_cta_holds_units(p, cta)) return true;
      // else an empty CTA between two owners
    }
  }
  NVFP4_HD int64_t piece() const { return pss * p.slots + (cta - f); }
};

}  // namespace nvfp4::sm90
