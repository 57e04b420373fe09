// The sm100 kernel's static persistent schedule: output tiles of kBlockM x kBlockN per batch,
// each split along K into `splits` work units when there are too few tiles to fill the GPU
// (M = 128 problems). Every role of every CTA walks the same unit sequence
// (unit = blockIdx.x, += gridDim.x), so the roles need no scheduler communication.
#pragma once

#include <cstdint>

#include "kernels/sm100/descriptors.hpp"

namespace nvfp4 {
namespace sm100 {

constexpr int kMaxSplits = 8;

struct WorkPlan {
  int m_tiles = 0, n_tiles = 0, batches = 0;
  int k_tiles = 0;  // K / kBlockK
  int splits = 1;   // K ranges per output tile
  NVFP4_HD int tiles() const { return m_tiles * n_tiles * batches; }
  NVFP4_HD int units() const { return tiles() * splits; }
};

struct WorkUnit {
  int tile = 0;  // index into the tile list (and the split-K counters)
  int batch = 0, m_tile = 0, n_tile = 0;
  int split = 0;
  int k_begin = 0, k_end = 0;  // K tiles [k_begin, k_end)
};

// Splits K only while tiles leave SMs idle; each split keeps at least one K tile.
NVFP4_HD WorkPlan make_plan(int64_t m, int64_t n, int64_t k, int64_t l, int sm_count) {
  WorkPlan p;
  p.m_tiles = static_cast<int>((m + kBlockM - 1) / kBlockM);
  p.n_tiles = static_cast<int>((n + kBlockN - 1) / kBlockN);
  p.batches = static_cast<int>(l);
  p.k_tiles = static_cast<int>(k / kBlockK);
  int s = p.tiles() > 0 ? sm_count / p.tiles() : 1;
  if (s > kMaxSplits) s = kMaxSplits;
  if (s > p.k_tiles) s = p.k_tiles;
  p.splits = s < 1 ? 1 : s;
  return p;
}

// The persistent grid: one CTA per SM at most, never more CTAs than units.
NVFP4_HD int launch_grid(const WorkPlan& p, int sm_count) {
  return p.units() < sm_count ? p.units() : sm_count;
}

// Units are tile-major (splits of one tile are adjacent) with N fastest, so CTAs running at
// the same time share the A rows and neighbouring B rows in L2.
NVFP4_HD WorkUnit decode_unit(const WorkPlan& p, int unit) {
  WorkUnit u;
  u.tile = unit / p.splits;
  u.split = unit % p.splits;
  u.n_tile = u.tile % p.n_tiles;
  u.m_tile = (u.tile / p.n_tiles) % p.m_tiles;
  u.batch = u.tile / (p.n_tiles * p.m_tiles);
  u.k_begin = static_cast<int>(static_cast<int64_t>(u.split) * p.k_tiles / p.splits);
  u.k_end = static_cast<int>(static_cast<int64_t>(u.split + 1) * p.k_tiles / p.splits);
  return u;
}

}  // namespace sm100
}  // namespace nvfp4
