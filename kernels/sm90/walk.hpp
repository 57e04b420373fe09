// The persistent schedule of both sm90 paths and the fused path's walk over a CTA's units (one
// definition each, host and device: the kernels walk it; tests/unit/sm90_config_test.cpp walks
// every CTA on the host and checks each output tile's K blocks are computed exactly once).
//
// Persistent CTAs walk work units u = cta, += ctas. A unit is one K split of one output tile;
// units are tile-major (the splits of a tile adjacent), and within a batch the tiles go in bands
// of `group` tile-rows, M fastest inside a band, so CTAs running together share A and B panels in
// L2.
#pragma once

#include <cstdint>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/stream_k.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4::sm90 {

struct WorkUnit {
  int order;     // u / splits: the tile's place in the schedule, unique per tile
  int batch, tm, tn;
  int split;     // which of the tile's `splits` pieces this is
  int splits;
  int kb0, kb1;  // K blocks [kb0, kb1)
};

// The tile in place `order` of the schedule (batch, then bands of `group` tile-rows, M fastest
// inside a band); split and K range left to the caller.
NVFP4_HD WorkUnit tile_unit(int order, int tiles_m, int tiles_n, int group) {
  WorkUnit x;
  x.order = order;
  const int per_batch = tiles_m * tiles_n;
  x.batch = x.order / per_batch;
  const int r = x.order - x.batch * per_batch;
  const int band = r / (group * tiles_n), within = r - band * (group * tiles_n);
  const int first = band * group;
  const int gm = group < tiles_m - first ? group : tiles_m - first;
  x.tm = first + within % gm;
  x.tn = within / gm;
  x.split = 0;
  x.splits = 1;
  x.kb0 = x.kb1 = 0;
  return x;
}

NVFP4_HD WorkUnit work_unit(int u, int tiles_m, int tiles_n, int splits, int group, int nk) {
  WorkUnit x = tile_unit(u / splits, tiles_m, tiles_n, group);
  x.split = u - x.order * splits;
  x.splits = splits;
  // balanced K ranges: split s gets K blocks [s*nk/S, (s+1)*nk/S), never empty (S <= nk)
  x.kb0 = static_cast<int>((static_cast<long long>(x.split) * nk) / splits);
  x.kb1 = static_cast<int>((static_cast<long long>(x.split + 1) * nk) / splits);
  return x;
}

// The fused path's walk over one CTA's work: split-K units u = cta, += ctas, or its stream-K
// range (stream_k.hpp) cut at tile boundaries into pieces, a piece being a unit whose split is its
// index among the tile's pieces. All three roles of the CTA (A producer, B producer, consumers)
// walk the same; the kernel passes blockIdx.x as cta and gridDim.x as ctas (read at each use: held
// in the walk they cost the fused kernel's SASS its identity with the form before the walk
// became host-testable). P: the kernel's parameters (units,
// tiles_m, tiles_n, split, nk; stream-K: workers > 0, wq, nq), read where used, not held across
// the K loop.
struct UnitWalk {
  int64_t pos, end;  // split-K: the next unit and p.units; stream-K: the next quad and the range's end
  template <class P>
  NVFP4_HD UnitWalk(const P& p, unsigned cta) {
    pos = p.workers > 0 ? stream_k_start(cta, p.wq, p.workers) : int64_t(cta);
    end = p.workers > 0 ? stream_k_start(cta + 1, p.wq, p.workers) : int64_t(p.units);
  }
  template <class P>
  NVFP4_HD bool next(const P& p, WorkUnit& x, unsigned cta, unsigned ctas) {
    if (pos >= end) return false;
    if (p.workers == 0) {
      x = work_unit(static_cast<int>(pos), p.tiles_m, p.tiles_n, p.split, kFusedGroup, p.nk);
      pos += ctas;
      return true;
    }
    const StreamKSegment g = stream_k_segment(pos, end, cta, p.wq, p.workers, p.nq);
    x = tile_unit(static_cast<int>(g.tile), p.tiles_m, p.tiles_n, kFusedGroup);
    x.split = g.seg;
    x.splits = g.nseg;
    x.kb0 = g.q0 * kFusedBStageKb;
    const int kb1 = g.q1 * kFusedBStageKb;
    x.kb1 = p.nk < kb1 ? p.nk : kb1;
    pos += g.q1 - g.q0;
    return true;
  }
};

}  // namespace nvfp4::sm90
