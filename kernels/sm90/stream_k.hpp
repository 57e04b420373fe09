// Stream-K for the fused path (one definition, host and device: fused_kernel.cuh walks it,
// config.cpp sizes the partials from it, tests/unit/sm90_config_test.cpp checks it covers every
// K block once).
//
// Split-K gives every tile the same number of K splits, so the units come in rounds of the SM
// count: 56 tiles at split 2 are 112 units on 132 SMs, a fifth of the GPU idle for the whole
// call (docs/kernels.md, the fused path's fixed costs). Stream-K lays the tiles' K end to end - in
// quads of kFusedBStageKb K blocks, so every range starts on a B-ring stage - and gives worker g
// of G the quads [g*W/G, (g+1)*W/G): each worker (one CTA) does the same amount of K, crossing
// tile boundaries. A tile's pieces (its segments, one per worker that touches it) are reduced by
// the split-K protocol of schedule.cuh with the segment index as the split: the last to arrive
// sums them in segment order, so the result is bit-reproducible for a given G.
#pragma once

#include <cstdint>

#include "src/format/nvfp4.hpp"

namespace nvfp4::sm90 {

// Weighted ranges (`fix` > 0, `stream-k W fix F`): a worker whose range crosses a tile boundary
// runs one more piece than one that does not, and pays its fixed cost (a fill, a hand-over or
// sum, an epilogue: ~4-5 quads of K at M tile 128, docs/kernels.md "Stamps"). So the ranges are
// laid out in cost positions: tile t covers [t*(nq+F), (t+1)*(nq+F)), F positions standing for
// a piece's fixed cost, then its nq quads; worker g takes the cost range [g*T/G, (g+1)*T/G),
// T = tiles*(nq+F), and the quads in it. F = 0 is the plain layout above. No range is empty while
// T/G > F (normalize() keeps F below that), since every F+1 consecutive positions hold a quad.

// All cost positions: T.
NVFP4_HD int64_t stream_k_cost(int64_t w, int nq, int fix) { return fix == 0 ? w : w / nq * (nq + fix); }

// The first quad of worker g: the first quad at or after cost position floor(g * T / G).
NVFP4_HD int64_t stream_k_start(int64_t g, int64_t w, int64_t workers, int nq, int fix) {
  const int64_t c = g * stream_k_cost(w, nq, fix) / workers;
  if (fix == 0) return c;  // cost positions are quads (and a constant 0 folds to the plain walk)
  const int64_t t = c / (nq + fix), off = c - t * (nq + fix);
  return t * nq + (off > fix ? off - fix : 0);
}

// The worker whose range holds quad `pos` (0 <= pos < W, W >= G): the largest g whose cost start
// is at or before the quad's cost position cp; floor(cp * G / T) is that g or one less.
NVFP4_HD int stream_k_worker_of(int64_t pos, int64_t w, int64_t workers, int nq, int fix) {
  const int64_t total = stream_k_cost(w, nq, fix);
  const int64_t cp = fix == 0 ? pos : pos / nq * (nq + fix) + fix + pos % nq;
  int64_t g = cp * workers / total;
  if (g + 1 < workers && (g + 1) * total / workers <= cp) ++g;
  return static_cast<int>(g);
}

// One piece of a worker's range: quads [q0, q1) of tile `tile` (quad indices within the tile),
// the `seg`-th of the tile's `nseg` pieces.
struct StreamKSegment {
  int64_t tile;
  int q0, q1;
  int seg, nseg;
};

// The piece of worker g that starts at quad `pos` (start(g) <= pos < end = start(g + 1)); the
// next piece starts at pos + q1 - q0. nq: quads per tile.
NVFP4_HD StreamKSegment stream_k_segment(int64_t pos, int64_t end, int g, int64_t w, int64_t workers, int nq,
                                         int fix) {
  StreamKSegment s;
  s.tile = pos / nq;
  s.q0 = static_cast<int>(pos - s.tile * nq);
  const int64_t left = end - pos;
  s.q1 = left < nq - s.q0 ? s.q0 + static_cast<int>(left) : nq;
  const int first = stream_k_worker_of(s.tile * nq, w, workers, nq, fix);
  const int last = stream_k_worker_of(s.tile * nq + nq - 1, w, workers, nq, fix);
  s.seg = g - first;
  s.nseg = last - first + 1;
  return s;
}

// The largest F that leaves no worker without a quad (T/G > F), at most `fix`; 0 where W < G.
inline int stream_k_fix_cap(int64_t tiles, int nq, int64_t workers, int fix) {
  if (workers <= 0 || tiles * nq < workers || fix <= 0) return 0;
  int f = fix;
  while (f > 0 && tiles * (nq + f) / workers <= f) --f;
  return f;
}

// The most pieces any tile has (the partial slots per tile the workspace holds): a tile of nq
// quads spans at most ceil(nq / floor(W/G)) + 1 workers, and never more than G.
// With weighted ranges (fix F < T/G) a range inside a tile still spans T/G >= 1 quads.
inline int stream_k_slots(int64_t tiles, int nq, int64_t workers, int fix) {
  const int64_t w = tiles * nq;
  if (workers <= 0 || w < workers) return 0;
  const int64_t per = tiles * (nq + fix) / workers;  // >= 1
  int64_t slots = (nq + per - 1) / per + 1;
  if (slots > workers) slots = workers;
  return static_cast<int>(slots);
}

}  // namespace nvfp4::sm90
