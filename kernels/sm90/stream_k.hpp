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

// The first quad of worker g: floor(g * W / G).
NVFP4_HD int64_t stream_k_start(int64_t g, int64_t w, int64_t workers) { return g * w / workers; }

// The worker whose range holds quad `pos` (0 <= pos < W, W >= G): the largest g whose start is at
// or before it; floor(pos * G / W) is that g or one less.
NVFP4_HD int stream_k_worker_of(int64_t pos, int64_t w, int64_t workers) {
  int64_t g = pos * workers / w;
  if (g + 1 < workers && (g + 1) * w / workers <= pos) ++g;
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
NVFP4_HD StreamKSegment stream_k_segment(int64_t pos, int64_t end, int g, int64_t w, int64_t workers, int nq) {
  StreamKSegment s;
  s.tile = pos / nq;
  s.q0 = static_cast<int>(pos - s.tile * nq);
  const int64_t left = end - pos;
  s.q1 = left < nq - s.q0 ? s.q0 + static_cast<int>(left) : nq;
  const int first = stream_k_worker_of(s.tile * nq, w, workers);
  const int last = stream_k_worker_of(s.tile * nq + nq - 1, w, workers);
  s.seg = g - first;
  s.nseg = last - first + 1;
  return s;
}

// The most pieces any tile has (the partial slots per tile the workspace holds): a tile of nq
// quads spans at most ceil(nq / floor(W/G)) + 1 workers, and never more than G.
inline int stream_k_slots(int64_t tiles, int nq, int64_t workers) {
  const int64_t w = tiles * nq;
  if (workers <= 0 || w < workers) return 0;
  const int64_t per = w / workers;  // >= 1
  int64_t slots = (nq + per - 1) / per + 1;
  if (slots > workers) slots = workers;
  return static_cast<int>(slots);
}

}  // namespace nvfp4::sm90
