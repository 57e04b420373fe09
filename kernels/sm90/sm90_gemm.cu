// `sm90`: NVFP4 GEMM for Hopper (sm_90a) - host side: shape rules, the tile/split heuristics,
// the deterministic split-K reduction of v1, the A prepass and the Gemm objects. The registered
// kernel takes, per shape, the fused path v3 (sm90_rs.cuh) or the two-phase path v4
// (sm90_two_phase.cu); v1 (sm90_kernel.cuh) and v2 (sm90_ws.cuh) stay for comparison.
#include "kernels/sm90/sm90_gemm.hpp"

#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "kernels/sm90/sm90_fused.cuh"
#include "kernels/sm90/sm90_kernel.cuh"
#include "kernels/sm90/sm90_rs.cuh"
#include "kernels/sm90/sm90_ws.cuh"

namespace nvfp4::sm90 {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// K granules per split, the one rule for normalize(), the cost models and every launch: an
// even share of nk, and for v3 with K % 256 == 0 a whole number of 4-granule super-granules
// (sm90_rs.cuh permutes K within them, so a split must start on one).
bool v3_super_granules(int64_t nk) { return nk % 4 == 0; }
int64_t granules_per_split(int64_t nk, const Config& c) {
  const int64_t cps = ceil_div(nk, c.split);
  return c.version == 3 && v3_super_granules(nk) ? ceil_div(cps, 4) * 4 : cps;
}

// Sums the FP32 partials of every split in split order (fixed, so results are bit-reproducible)
// and rounds once to fp16.
template <bool kVec>
__global__ void splitk_reduce(const float* __restrict__ ws, __half* __restrict__ c, int64_t elems,
                              int split) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (kVec) {
    const int64_t n4 = elems / 4;
    for (int64_t i = first; i < n4; i += stride) {
      float4 s = reinterpret_cast<const float4*>(ws)[i];
      for (int t = 1; t < split; ++t) {
        const float4 v = reinterpret_cast<const float4*>(ws + t * elems)[i];
        s.x += v.x;
        s.y += v.y;
        s.z += v.z;
        s.w += v.w;
      }
      const __half2 lo = __floats2half2_rn(s.x, s.y), hi = __floats2half2_rn(s.z, s.w);
      uint2 out;
      out.x = *reinterpret_cast<const uint32_t*>(&lo);
      out.y = *reinterpret_cast<const uint32_t*>(&hi);
      reinterpret_cast<uint2*>(c)[i] = out;
    }
  } else {
    for (int64_t i = first; i < elems; i += stride) {
      float s = ws[i];
      for (int t = 1; t < split; ++t) s += ws[t * elems + i];
      c[i] = __float2half_rn(s);
    }
  }
}

// Rough cost model of one configuration, in microseconds on an H200-class part. A 64-wide K
// granule of a 128 x bn tile is 2*128*bn*64 flops at ~7 TFLOP/s per SM, inflated by the A-side
// decode that every tile repeats (relatively larger for narrow tiles); each wave pays ~1 us of
// pipeline fill and epilogue; split-K pays a reduction launch plus its L2 traffic.
double estimate_us(const Shape& s, const Config& c, int sms) {
  const int64_t nk = s.k / kGranuleK;
  const int64_t tiles = ceil_div(s.m, kBM) * ceil_div(s.n, c.bn) * s.l;
  const int64_t cps = granules_per_split(nk, c);
  const int64_t waves = ceil_div(tiles * c.split, sms);
  const double granule_us = (2.0 * kBM * c.bn * kGranuleK) / 7.0e6 * (1.0 + 64.0 / c.bn);
  double t = double(waves) * (double(cps) * granule_us + 1.0);
  if (c.split > 1) {
    const double bytes = double(c.split) * double(s.m * s.n * s.l) * 4.0 * 2.0;
    t += 2.0 + bytes / 6.0e6;  // ~6 TB/s, mostly L2-resident
  }
  return t;
}

// v2, fitted to the H200 sweep (git show 8820f35:bench/results/h200/sm90-dev/run3-v2ws): a 64-wide K granule of a
// 128 x bn tile costs (460 + 6.2 bn) clocks at ~1.755 GHz (a fixed part per granule plus the
// width), each CTA ~5.5 us of fill, drain and epilogue, the cluster reduction ~1.5 us per
// split, and (amode 0) the A prepass: its bytes at ~2.5 TB/s plus a launch mostly hidden by PDL.
// Waves count resident clusters (cudaOccupancyMaxActiveClusters when a device answers).
double estimate_v2_us(const Shape& s, const Config& c, int capacity_ctas) {
  const int64_t nk = s.k / kGranuleK;
  const int64_t tiles = ceil_div(s.m, kBM) * ceil_div(s.n, c.bn) * s.l;
  const int64_t cps = granules_per_split(nk, c);
  const int64_t waves = ceil_div(tiles * c.split, std::max(1, capacity_ctas));
  const double granule_us = (460.0 + 6.2 * c.bn) / 1755.0;
  double t = double(waves) * (double(cps) * granule_us + 5.5);
  if (c.split > 1) t += 1.5 * c.split;
  if (c.amode == 0) t += 0.5 + double(ceil_div(s.m, kBM) * kBM * s.k * s.l) * 2.6 / 2.5e6;
  return t;
}

int v2_capacity(int bn, int amode, int split, int sms) {
  int clusters = 0;
  switch (bn * 2 + amode) {
    case 256: clusters = v2::max_active_clusters<128, 0>(split); break;
    case 257: clusters = v2::max_active_clusters<128, 1>(split); break;
    case 384: clusters = v2::max_active_clusters<192, 0>(split); break;
    case 385: clusters = v2::max_active_clusters<192, 1>(split); break;
    case 448: clusters = v2::max_active_clusters<224, 0>(split); break;
    case 449: clusters = v2::max_active_clusters<224, 1>(split); break;
    case 512: clusters = v2::max_active_clusters<256, 0>(split); break;
    case 513: clusters = v2::max_active_clusters<256, 1>(split); break;
    default: break;
  }
  if (clusters > 0) return clusters * split;
  return (sms / split) * split;  // no device: assume every SM can hold a cluster member
}

}  // namespace

namespace v2 {

__global__ void __launch_bounds__(128) decode_a_kernel(const Params p) {
#if defined(NVFP4_SM90_DEVICE)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (p.counters != nullptr)  // v3's split-K tile counters start at zero every call
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.ncounters;
         i += int64_t(gridDim.x) * blockDim.x)
      p.counters[i] = 0;
  // One block per (batch, m tile, granule): each thread decodes its row into shared memory
  // (swizzled as the main kernel wants it), then the block writes the 16 KB tile coalesced.
  __shared__ uint4 tile[kATile / 16];
  const int64_t blk = blockIdx.x;
  const int64_t g = blk % p.nk, rest = blk / p.nk;
  const int64_t tm = rest % p.tiles_m, batch = rest / p.tiles_m;
  const int r = threadIdx.x;
  const int64_t row = tm * 128 + r;
  const int sw = r & 7;
  if (row < p.m) {
    const int64_t kbytes = p.k / 2, kblocks = p.k / 16;
    const uint8_t* src = p.a + (batch * p.m + row) * kbytes + g * 32;
    const uint8_t* ssrc = p.sfa + (batch * p.m + row) * kblocks + g * 4;
    uint4 lo, hi;
    uint32_t sc;
    if (p.sg == 4) {
      // v3's super-granule K order (sm90_rs.cuh): block c of logical granule g is physical
      // block 4c + g%4 of the 256-K super-granule that holds g.
      const int64_t gi = g & 3;
      const uint8_t* sg = src - gi * 32;
      const uint8_t* ssg = ssrc - gi * 4;
      const uint2 b0 = __ldg(reinterpret_cast<const uint2*>(sg + 0 * 32 + gi * 8));
      const uint2 b1 = __ldg(reinterpret_cast<const uint2*>(sg + 1 * 32 + gi * 8));
      const uint2 b2 = __ldg(reinterpret_cast<const uint2*>(sg + 2 * 32 + gi * 8));
      const uint2 b3 = __ldg(reinterpret_cast<const uint2*>(sg + 3 * 32 + gi * 8));
      lo = make_uint4(b0.x, b0.y, b1.x, b1.y);
      hi = make_uint4(b2.x, b2.y, b3.x, b3.y);
      sc = uint32_t(__ldg(ssg + gi)) | (uint32_t(__ldg(ssg + 4 + gi)) << 8) |
           (uint32_t(__ldg(ssg + 8 + gi)) << 16) | (uint32_t(__ldg(ssg + 12 + gi)) << 24);
    } else {
      lo = __ldg(reinterpret_cast<const uint4*>(src));
      hi = __ldg(reinterpret_cast<const uint4*>(src + 16));
      sc = __ldg(reinterpret_cast<const uint32_t*>(ssrc));
    }
    dev::decode_row(lo, hi, sc, [&](int q, uint4 v) { tile[r * 8 + (q ^ sw)] = v; });
  } else {
#pragma unroll
    for (int q = 0; q < 8; ++q) tile[r * 8 + q] = make_uint4(0, 0, 0, 0);  // rows past M
  }
  __syncthreads();
  uint4* dst = reinterpret_cast<uint4*>(const_cast<uint8_t*>(p.a16) + blk * int64_t(kATile));
#pragma unroll
  for (int j = 0; j < 8; ++j) dst[r + 128 * j] = tile[r + 128 * j];
#else
  (void)p;
#endif
}

}  // namespace v2

Availability availability(const DeviceInfo& dev) {
  if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
  if (dev.cc_major != 9 || dev.cc_minor != 0)
    return {false, fmt::format("needs compute capability 9.0 (sm_90a wgmma); {} has {}", dev.name,
                               dev.cc_string())};
  return {true, {}};
}

std::string shape_error(const Shape& s) {
  if (s.k % kGranuleK != 0)
    return fmt::format("K must be a multiple of {} (the sm90 kernel's K granule)", kGranuleK);
  if (s.l > 65535) return "L must be at most 65535 (grid z limit)";
  if (s.m > std::numeric_limits<int32_t>::max() || s.n > std::numeric_limits<int32_t>::max())
    return "M and N must be below 2^31";
  if (ceil_div(s.m, kBM) * ceil_div(s.n, 128) > std::numeric_limits<int32_t>::max())
    return "too many 128x128 tiles for one grid";
  return {};
}

Config normalize(const Shape& s, Config c) {
  const int64_t nk = std::max<int64_t>(1, s.k / kGranuleK);
  const int64_t max_split = c.version == 2   ? kMaxSplitV2
                            : c.version == 3 ? kMaxSplitV3
                            : c.version == 4 ? kMaxSplitV4
                            : c.version == 5 ? kMaxSplitV5
                                             : 65535;
  c.split = static_cast<int>(std::clamp<int64_t>(c.split, 1, std::min<int64_t>(nk, max_split)));
  c.split = static_cast<int>(ceil_div(nk, granules_per_split(nk, c)));
  return c;
}

int current_sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) {
    (void)cudaGetLastError();
    return 132;
  }
  return sms;
}

// Heuristic: try every tile width (128/192/224/256) and split (1..64) and keep the cheapest by
// estimate_us(); ties go to the smaller split. Splits are only considered while the FP32
// workspace stays under 1 GiB. At M=128 this picks a width whose tile count times the split
// nearly fills the SMs (e.g. 7168 = 32 x 224 with split 4 -> 128 CTAs on 132 SMs).
Config choose_config_v1(const Shape& s, int sms) {
  Config best;
  best.version = 1;
  double best_t = std::numeric_limits<double>::infinity();
  const int64_t nk = s.k / kGranuleK;
  for (int bn : {256, 224, 192, 128}) {
    for (int split = 1; split <= 64 && split <= nk; ++split) {
      Config c = normalize(s, Config{bn, split, 0, 1, 0});
      if (c.split != split) continue;
      if (split > 1 && double(split) * double(s.m * s.n * s.l) * 4.0 > double(1ull << 30)) break;
      const double t = estimate_us(s, c, sms);
      if (t < best_t * 0.999) {
        best_t = t;
        best = c;
      }
    }
  }
  return best;
}

// v2's choice (bench comparisons). Measured on the H200 (commit 8e8a0b6, bench/results/h200/sm90-dev/run5-*):
// v1 is faster at small M with long K (128x7168x16384: 87.8 vs 90.2 us, 128x4096x7168: 30.9 vs
// 36.5 us), v2 everywhere else measured. Within v2: every tile width and split 1..8 with the
// prepass A (amode 0), cheapest by estimate_v2_us(); ties go to the smaller split.
Config choose_config_v2(const Shape& s, int sms) {
  if (s.m <= 256 && s.k >= 4096) return choose_config_v1(s, sms);
  Config best;
  double best_t = std::numeric_limits<double>::infinity();
  const int64_t nk = s.k / kGranuleK;
  for (int bn : {256, 224, 192, 128}) {
    for (int split = 1; split <= kMaxSplitV2 && split <= nk; ++split) {
      Config c = normalize(s, Config{bn, split, 0, 2, 0});
      if (c.split != split) continue;
      const double t = estimate_v2_us(s, c, v2_capacity(bn, c.amode, split, sms));
      if (t < best_t * 0.999) {
        best_t = t;
        best = c;
      }
    }
  }
  return best;
}

namespace {

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// v3 workspace: [a16 prepass tiles][split-K partials][tile counters], 256-byte aligned parts.
struct V3Layout {
  int tiles128 = 0, tiles_m = 0, tiles_n = 0, tiles = 0;
  size_t a16 = 0, partial = 0, counters = 0, total = 0;
};
V3Layout v3_layout(const Shape& s, const Config& c) {
  V3Layout w;
  const int per = c.mt / 128;
  w.tiles_m = static_cast<int>(ceil_div(s.m, c.mt));
  w.tiles128 = w.tiles_m * per;
  w.tiles_n = static_cast<int>(ceil_div(s.n, v3::kRowsN));
  w.tiles = static_cast<int>(s.l * w.tiles_m * w.tiles_n);
  w.a16 = size_t(s.l) * size_t(w.tiles128) * size_t(s.k / kGranuleK) * v3::kATileBytes;
  w.partial = c.split > 1 ? size_t(w.tiles) * size_t(c.split) * size_t(v3::kRowsN) * size_t(c.mt) * 4 : 0;
  w.counters = c.split > 1 ? size_t(w.tiles) * 4 : 0;
  w.total = round_up(w.a16, 256) + round_up(w.partial, 256) + round_up(w.counters, 256);
  return w;
}

// v3 cost model (128-row M tile), fitted to the H200 (every split 1..16 of ten shapes,
// M 128..8192, commit c0ec880, bench/results/h200/sm90-dev/run9-v3-smemb/c-bench.txt; rms error 4 %, and it picks
// the measured best split on all ten): a 64-wide K granule of a 128x128 tile costs ~0.52 us;
// every unit a CTA walks adds ~3 us (pipeline refill, epilogue) and, with split-K, ~1 us plus
// ~1 us per split (the partial written, the last split reading all of them through one SM);
// ~6 us per call (launch, prepass, first loads). A CTA's work is its rounds = ceil(units /
// resident CTAs) times the per-unit cost: whole waves, so the split that makes units a little
// over a multiple of the SM count loses to its neighbours.
double estimate_v3_us(const Shape& s, const Config& c, int resident) {
  const int64_t nk = s.k / kGranuleK;
  const int64_t units = int64_t(v3_layout(s, c).tiles) * c.split;
  const int64_t rounds = ceil_div(units, std::max(1, resident));
  const double granule_us = 0.52;
  const double unit_us = 3.0 + (c.split > 1 ? 1.0 + 1.0 * c.split : 0.0);
  return double(rounds) * (double(granules_per_split(nk, c)) * granule_us + unit_us) + 6.0;
}

// v5 workspace: [a16 prepass tiles][split-K partials][tile counters], 256-byte aligned parts.
// The prepass writes whole 128-row tiles (rows past M zero); an M tile below 128 rows is a
// row slice of one of them.
struct V5Layout {
  int tiles128 = 0, tiles_m = 0, tiles_n = 0, tiles = 0;
  size_t a16 = 0, partial = 0, counters = 0, total = 0;
};
V5Layout v5_layout(const Shape& s, const Config& c) {
  V5Layout w;
  w.tiles_m = static_cast<int>(ceil_div(s.m, c.mt));
  w.tiles128 = c.mt >= 128 ? w.tiles_m * (c.mt / 128) : static_cast<int>(ceil_div(s.m, 128));
  w.tiles_n = static_cast<int>(ceil_div(s.n, v5::kRowsN));
  w.tiles = static_cast<int>(s.l * w.tiles_m * w.tiles_n);
  w.a16 = size_t(s.l) * size_t(w.tiles128) * size_t(s.k / kGranuleK) * v5::kATile;
  w.partial = c.split > 1 ? size_t(w.tiles) * size_t(c.split) * size_t(v5::kRowsN) * size_t(c.mt) * 4 : 0;
  w.counters = c.split > 1 ? size_t(w.tiles) * 4 : 0;
  w.total = round_up(w.a16, 256) + round_up(w.partial, 256) + round_up(w.counters, 256);
  return w;
}

// v5 cost model (first estimate from the design's arithmetic, not yet fitted): per 64-wide K
// block of a 128 x mt tile a CTA spends the larger of its tensor time (4 * mt clocks: two
// m64nMTk16 x 4 at ~4096 FLOP/clock/SM) and the decode's issue time (~300 clocks: two consumer
// warps per SM sub-partition, ~100 instructions each), plus ~60 clocks of barrier hand-off; each
// unit ~1.5 us of fill and epilogue, split-K ~1 us plus 0.25 us per split; ~4 us per call. The
// raw B and its scales from DRAM at ~3.5 TB/s bound it from below.
double estimate_v5_us(const Shape& s, const Config& c, int sms) {
  const int64_t nk = s.k / kGranuleK;
  const int64_t units = int64_t(v5_layout(s, c).tiles) * c.split;
  const int64_t rounds = ceil_div(units, std::max(1, sms));
  const double block_clk = std::max(4.0 * c.mt, 300.0) + 60.0;
  const double unit_us = 1.5 + (c.split > 1 ? 1.0 + 0.25 * c.split : 0.0);
  const double t = double(rounds) * (double(ceil_div(nk, c.split)) * block_clk / 1755.0 + unit_us) + 4.0;
  const double bytes = double(s.l) * double(s.n) * double(s.k) * (0.5 + 1.0 / 16.0);
  return std::max(t, bytes / 3.5e6 + 4.0);
}

}  // namespace

// v5's choice: every M tile and split 1..32 (partials under 1 GiB), cheapest by
// estimate_v5_us(); ties go to the smaller split and the larger tile.
Config choose_fused_v5_config(const Shape& s, int sms) {
  Config best;
  double best_t = std::numeric_limits<double>::infinity();
  const int64_t nk = s.k / kGranuleK;
  for (int mt : {256, 128, 64, 32, 16}) {
    if (mt > 16 && mt / 2 >= s.m) continue;  // a tile of twice M or more only adds padded rows
    for (int split = 1; split <= kMaxSplitV5 && split <= nk; ++split) {
      Config c;
      c.version = 5;
      c.mt = mt;
      c.split = split;
      c = normalize(s, c);
      if (c.split != split) continue;
      if (v5_layout(s, c).partial > (size_t(1) << 30)) break;
      const double t = estimate_v5_us(s, c, sms);
      if (t < best_t * 0.999) {
        best_t = t;
        best = c;
      }
    }
  }
  return best;
}

// The fused path's choice: v3 with the 128-row M tile and the split (1..16) of least
// estimate_v3_us(); ties go to the smaller split. The 256-row tile needs more registers than a
// thread has (ptxas spills ~0.5 KB) and measured slower at 4096^3 (333.0 vs 306.6 us) and
// 8192^3 (2496 vs 2318 us), so it is built and tested but not chosen.
Config choose_fused_config(const Shape& s, int sms) {
  Config best;
  double best_t = std::numeric_limits<double>::infinity();
  const int64_t nk = s.k / kGranuleK;
  const int resident = v3::resident_ctas<128>();
  for (int split = 1; split <= 16 && split <= nk; ++split) {
    const Config c = normalize(s, Config{128, split, 0, 3, 0, 1, 128});
    if (c.split != split) continue;
    if (v3_layout(s, c).partial > (size_t(1) << 30)) break;  // split-K partials under 1 GiB
    const double t = estimate_v3_us(s, c, resident > 0 ? resident : sms);
    if (t < best_t * 0.999) {
      best_t = t;
      best = c;
    }
  }
  return best;
}

// The registered kernel's choice between the paths: the fused one decodes B (and reads the fp16
// A) once per M tile and wins where few M tiles share B; the two-phase one pays one decode pass
// over A and B and then runs the fp16 mainloop at its full rate, which wins from M = 1024 on.
// Both paths were timed on all 61 shapes of the two shipped sweep configs on an H200 (device run
// of 2026-11-30, bench/results/h200/2026-11-30-sm90-2phase/paths): this rule is within 5 % of
// the faster path on every one of them (tests/unit/sm90_host_test.cpp checks it against that table;
// it loses only at 384x7168x2304, by 4 %).
// Comparing the two cost models instead was wrong by up to 37 % (the fused model misses at
// M >= 1024 with few N tiles), so the models choose only tiles and splits within a path.
Config choose_config(const Shape& s, int sms, Path path) {
  if (path == Path::TwoPhase || (path == Path::Auto && s.m >= kTwoPhaseMinM))
    return choose_two_phase_config(s, sms);
  if (path == Path::FusedV5) return choose_fused_v5_config(s, sms);
  return choose_fused_config(s, sms);
}

size_t workspace_bytes(const Shape& s, const Config& c0) {
  const Config c = normalize(s, c0);
  if (c.version == 4) return two_phase_workspace_bytes(s, c);
  if (c.version == 5) return v5_layout(s, c).total;
  if (c.version == 3) return v3_layout(s, c).total;
  if (c.version == 2) {
    if (c.amode != 0) return 0;
    return size_t(s.l) * size_t(ceil_div(s.m, kBM)) * size_t(s.k / kGranuleK) * v2::kATile;
  }
  if (c.split <= 1) return 0;
  return size_t(c.split) * size_t(s.l) * size_t(s.m) * size_t(s.n) * sizeof(float);
}

std::string describe(const Config& c) {
  if (c.version == 4)
    return fmt::format("two-phase {}x{} split {} group {}", c.f16_bm, c.f16_bn, c.split, c.f16_group);
  if (c.version == 5) return fmt::format("v5 {}x128 split {}", c.mt, c.split);
  if (c.version == 3)
    return fmt::format("v3 {}x128 split {}{}{}", c.mt, c.split,
                       c.mt == 128 && c.bufs == 2 && c.diag == 0 ? " b2" : "",
                       c.diag == 1   ? " [no A copies]"
                       : c.diag == 2 ? " [no decode]"
                       : c.diag == 3 ? " [no A, no decode]"
                       : c.diag == 7 ? " [wgmma only]"
                                     : "");
  if (c.version == 2)
    return fmt::format("v2 128x{} split {} {}{}{}", c.bn, c.split, c.amode == 0 ? "Apre" : "Atile",
                       c.producers == 2 ? " P2" : "",
                       c.diag == 1   ? " [no decode]"
                       : c.diag == 2 ? " [no wgmma]"
                       : c.diag == 4 ? " [no fence]"
                                     : "");
  return fmt::format("v1 128x{} split {}{}", c.bn, c.split,
                     c.diag == 1 ? " [no decode]" : c.diag == 2 ? " [no wgmma]" : "");
}

namespace {

void launch_v3(const Shape& s, const Operands& ops, const Config& c, void* workspace,
               cudaStream_t stream) {
  if (c.mt != 128 && c.mt != 256)
    throw usage_error(fmt::format("sm90: v3 M tile {} not built (128/256)", c.mt));
  const V3Layout w = v3_layout(s, c);
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  v3::Params p{};
  p.b = ops.b;
  p.sfb = ops.sfb;
  p.a16 = ws;
  p.c = reinterpret_cast<__half*>(ops.c);
  p.partial = c.split > 1 ? reinterpret_cast<float*>(ws + round_up(w.a16, 256)) : nullptr;
  p.counters = c.split > 1
                   ? reinterpret_cast<int*>(ws + round_up(w.a16, 256) + round_up(w.partial, 256))
                   : nullptr;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.l = s.l;
  p.nk = static_cast<int>(s.k / kGranuleK);
  p.cps = static_cast<int>(granules_per_split(p.nk, c));
  p.split = c.split;
  p.tiles128 = w.tiles128;
  p.tiles_m = w.tiles_m;
  p.tiles_n = w.tiles_n;
  const int64_t units = int64_t(w.tiles) * c.split;
  if (units > std::numeric_limits<int32_t>::max())
    throw usage_error("sm90: too many v3 work units for this shape");
  p.units = static_cast<int>(units);

  // The prepass decodes A into w.tiles128 tiles per batch (rows past M zero) and zeroes the
  // split-K counters.
  v2::Params pp{};
  pp.a = ops.a;
  pp.sfa = ops.sfa;
  pp.a16 = ws;
  pp.m = s.m;
  pp.k = s.k;
  pp.l = s.l;
  pp.nk = p.nk;
  pp.tiles_m = w.tiles128;
  pp.counters = p.counters;
  pp.ncounters = p.counters != nullptr ? w.tiles : 0;
  const bool sg4 = v3_super_granules(p.nk);  // K order over super-granules (sm90_rs.cuh)
  pp.sg = sg4 ? 4 : 1;
  const int64_t blocks = s.l * int64_t(w.tiles128) * p.nk;
  v2::decode_a_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(pp);
  NVFP4_CUDA_CHECK_LAUNCH();
  const int resident = c.mt == 128 ? v3::resident_ctas<128>() : v3::resident_ctas<256>();
  const int grid = static_cast<int>(std::min<int64_t>(units, resident > 0 ? resident : current_sm_count()));
  if (c.diag != 0) {
    if (!sg4) throw usage_error("sm90: v3 diagnostic variants need K % 256 == 0");
    if (c.diag == 7 && c.mt == 256) {
      v3::launch_rs<256, 7>(p, grid, stream);
      return;
    }
    if (c.mt != 128 || (c.diag < 1 || c.diag > 3) && c.diag != 7)
      throw usage_error("sm90: v3 diagnostic variants 1-3 and 7 (128 tile), 7 (256 tile)");
    if (c.diag == 1) v3::launch_rs<128, 1>(p, grid, stream);
    if (c.diag == 2) v3::launch_rs<128, 2>(p, grid, stream);
    if (c.diag == 3) v3::launch_rs<128, 3>(p, grid, stream);
    if (c.diag == 7) v3::launch_rs<128, 7>(p, grid, stream);
  } else if (c.mt == 128) {
    if (!sg4)
      v3::launch_rs<128, 0, 1>(p, grid, stream);
    else if (c.bufs == 3)
      v3::launch_rs<128, 0, 4, 3>(p, grid, stream);
    else
      v3::launch_rs<128, 0, 4, 2>(p, grid, stream);
  } else {
    if (sg4)
      v3::launch_rs<256>(p, grid, stream);
    else
      v3::launch_rs<256, 0, 1>(p, grid, stream);
  }
}

void launch_v5(const Shape& s, const Operands& ops, const Config& c, void* workspace,
               cudaStream_t stream) {
  if (c.mt != 16 && c.mt != 32 && c.mt != 64 && c.mt != 128 && c.mt != 256)
    throw usage_error(fmt::format("sm90: v5 M tile {} not built (16/32/64/128/256)", c.mt));
  const V5Layout w = v5_layout(s, c);
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  v5::Params p{};
  p.b = ops.b;
  p.sfb = ops.sfb;
  p.a16 = ws;
  p.c = reinterpret_cast<__half*>(ops.c);
  p.partial = c.split > 1 ? reinterpret_cast<float*>(ws + round_up(w.a16, 256)) : nullptr;
  p.counters = c.split > 1
                   ? reinterpret_cast<int*>(ws + round_up(w.a16, 256) + round_up(w.partial, 256))
                   : nullptr;
  p.m = static_cast<int>(s.m);
  p.n = static_cast<int>(s.n);
  p.l = static_cast<int>(s.l);
  p.nk = static_cast<int>(s.k / kGranuleK);
  if (s.k / 2 > std::numeric_limits<int32_t>::max()) throw usage_error("sm90: K too large for v5");
  p.kbytes = static_cast<int>(s.k / 2);
  p.kblocks = static_cast<int>(s.k / 16);
  p.tiles128 = w.tiles128;
  p.tiles_m = w.tiles_m;
  p.tiles_n = w.tiles_n;
  p.split = c.split;
  const int64_t units = int64_t(w.tiles) * c.split;
  if (units > std::numeric_limits<int32_t>::max() / 2)
    throw usage_error("sm90: too many v5 work units for this shape");
  p.units = static_cast<int>(units);
  p.tma_store = s.n % 8 == 0 ? 1 : 0;  // C is 16-byte aligned (launch() checks)
  CUtensorMap tmc;
  std::memset(&tmc, 0, sizeof tmc);
  if (p.tma_store) {
    try {
      tmc = f16_detail::make_tmap_c(p.c, s.m, s.n, s.l, c.mt < 64 ? c.mt : 64);
    } catch (const std::runtime_error& e) {
      throw runtime_error(std::string("sm90 v5: ") + e.what());
    }
  }

  // The prepass decodes A into w.tiles128 tiles per batch (per-granule K order, decode_frag's)
  // and zeroes the split-K counters; it triggers the main kernel (PDL) at its start.
  v2::Params pp{};
  pp.a = ops.a;
  pp.sfa = ops.sfa;
  pp.a16 = ws;
  pp.m = s.m;
  pp.k = s.k;
  pp.l = s.l;
  pp.nk = p.nk;
  pp.tiles_m = w.tiles128;
  pp.counters = p.counters;
  pp.ncounters = p.counters != nullptr ? w.tiles : 0;
  pp.sg = 1;
  const int64_t blocks = s.l * int64_t(w.tiles128) * p.nk;
  v2::decode_a_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(pp);
  NVFP4_CUDA_CHECK_LAUNCH();
  const int grid = static_cast<int>(std::min<int64_t>(units, current_sm_count()));
  switch (c.mt) {
    case 16: v5::launch_fused<16>(p, tmc, grid, stream); break;
    case 32: v5::launch_fused<32>(p, tmc, grid, stream); break;
    case 64: v5::launch_fused<64>(p, tmc, grid, stream); break;
    case 128: v5::launch_fused<128>(p, tmc, grid, stream); break;
    default: v5::launch_fused<256>(p, tmc, grid, stream); break;
  }
}

void launch_v2(const Shape& s, const Operands& ops, const Config& c, void* workspace,
               cudaStream_t stream) {
  v2::Params p{};
  p.a = ops.a;
  p.b = ops.b;
  p.sfa = ops.sfa;
  p.sfb = ops.sfb;
  p.a16 = static_cast<const uint8_t*>(workspace);
  p.c = reinterpret_cast<__half*>(ops.c);
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.l = s.l;
  p.nk = static_cast<int>(s.k / kGranuleK);
  p.cps = static_cast<int>(granules_per_split(p.nk, c));
  p.split = c.split;
  p.tiles_m = static_cast<int>(ceil_div(s.m, kBM));
  const dim3 grid(static_cast<unsigned>(p.tiles_m * ceil_div(s.n, c.bn)),
                  static_cast<unsigned>(c.split), static_cast<unsigned>(s.l));
  if (c.amode == 0) {
    const int64_t blocks = s.l * p.tiles_m * int64_t(p.nk);  // tile order = a16 layout order
    v2::decode_a_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(p);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  const bool pdl = c.amode == 0;
  if (c.diag != 0) {
    if (c.bn != 256 || c.amode != 0 || (c.diag != 1 && c.diag != 2 && c.diag != 4))
      throw usage_error("sm90: v2 diagnostic variants exist for 128x256 with the A prepass only");
    if (c.diag == 1) v2::launch_ws<256, 0, 1>(p, grid, pdl, stream);
    if (c.diag == 2) v2::launch_ws<256, 0, 2>(p, grid, pdl, stream);
    if (c.diag == 4) v2::launch_ws<256, 0, 4>(p, grid, pdl, stream);
    return;
  }
  if (c.producers == 2) {
    switch (c.bn * 2 + (c.amode == 0 ? 0 : 1)) {
      case 256: v2::launch_ws<128, 0, 0, 2>(p, grid, pdl, stream); break;
      case 257: v2::launch_ws<128, 1, 0, 2>(p, grid, pdl, stream); break;
      case 384: v2::launch_ws<192, 0, 0, 2>(p, grid, pdl, stream); break;
      case 385: v2::launch_ws<192, 1, 0, 2>(p, grid, pdl, stream); break;
      default: throw usage_error("sm90: two producer warpgroups are built for widths 128/192");
    }
    return;
  }
  switch (c.bn * 2 + (c.amode == 0 ? 0 : 1)) {
    case 256: v2::launch_ws<128, 0>(p, grid, pdl, stream); break;
    case 257: v2::launch_ws<128, 1>(p, grid, pdl, stream); break;
    case 384: v2::launch_ws<192, 0>(p, grid, pdl, stream); break;
    case 385: v2::launch_ws<192, 1>(p, grid, pdl, stream); break;
    case 448: v2::launch_ws<224, 0>(p, grid, pdl, stream); break;
    case 449: v2::launch_ws<224, 1>(p, grid, pdl, stream); break;
    case 512: v2::launch_ws<256, 0>(p, grid, pdl, stream); break;
    case 513: v2::launch_ws<256, 1>(p, grid, pdl, stream); break;
    default: throw usage_error(fmt::format("sm90: tile width {} not built (128/192/224/256)", c.bn));
  }
}

}  // namespace

void launch(const Shape& s, const Operands& ops, const Config& c0, void* workspace,
            cudaStream_t stream) {
  const Config c = normalize(s, c0);
  auto misaligned = [](const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a != 0; };
  if (misaligned(ops.a, 16) || misaligned(ops.b, 16) || misaligned(ops.sfa, 4) ||
      misaligned(ops.sfb, 4) || misaligned(ops.c, 16))
    throw runtime_error("sm90: A and B must be 16-byte aligned, scales 4-byte, C 16-byte");
  if (c.version == 4) {
    if (workspace == nullptr || misaligned(workspace, 256))
      throw runtime_error("sm90: the two-phase path needs a 256-byte aligned workspace");
    launch_two_phase(s, ops, c, workspace, stream);
    return;
  }
  if (c.version == 5) {
    if (workspace == nullptr || misaligned(workspace, 256))
      throw runtime_error("sm90: v5 needs a 256-byte aligned workspace (A prepass)");
    launch_v5(s, ops, c, workspace, stream);
    return;
  }
  if (c.version == 3) {
    if (workspace == nullptr || misaligned(workspace, 16))
      throw runtime_error("sm90: v3 needs a 16-byte aligned workspace (A prepass)");
    launch_v3(s, ops, c, workspace, stream);
    return;
  }
  if (c.version == 2) {
    if (c.amode == 0 && (workspace == nullptr || misaligned(workspace, 16)))
      throw runtime_error("sm90: the A prepass needs a 16-byte aligned workspace");
    launch_v2(s, ops, c, workspace, stream);
    return;
  }
  if (c.split > 1 && (workspace == nullptr || misaligned(workspace, 16)))
    throw runtime_error("sm90: split-K needs a 16-byte aligned workspace");

  Params p{};
  p.a = ops.a;
  p.b = ops.b;
  p.sfa = ops.sfa;
  p.sfb = ops.sfb;
  p.c = reinterpret_cast<__half*>(ops.c);
  p.ws = static_cast<float*>(workspace);
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.l = s.l;
  p.nk = static_cast<int>(s.k / kGranuleK);
  p.cps = static_cast<int>(granules_per_split(p.nk, c));
  p.split = c.split;
  p.tiles_m = static_cast<int>(ceil_div(s.m, kBM));
  const dim3 grid(static_cast<unsigned>(p.tiles_m * ceil_div(s.n, c.bn)),
                  static_cast<unsigned>(c.split), static_cast<unsigned>(s.l));
  if (c.diag != 0) {
    if (c.bn != 256 || (c.diag != 1 && c.diag != 2))
      throw usage_error("sm90: diagnostic variants exist for tile width 256 only");
    launch_diag(p, grid, stream, c.diag);
  } else switch (c.bn) {
    case 128: launch_bn<128>(p, grid, stream); break;
    case 192: launch_bn<192>(p, grid, stream); break;
    case 224: launch_bn<224>(p, grid, stream); break;
    case 256: launch_bn<256>(p, grid, stream); break;
    default: throw usage_error(fmt::format("sm90: tile width {} not built (128/192/224/256)", c.bn));
  }
  if (c.split > 1) {
    const int64_t elems = s.l * s.m * s.n;
    const bool vec = elems % 4 == 0;
    const int64_t work = vec ? elems / 4 : elems;
    const unsigned blocks = static_cast<unsigned>(
        std::clamp<int64_t>(ceil_div(work, 256), 1, int64_t(current_sm_count()) * 8));
    if (vec)
      splitk_reduce<true><<<blocks, 256, 0, stream>>>(p.ws, p.c, elems, c.split);
    else
      splitk_reduce<false><<<blocks, 256, 0, stream>>>(p.ws, p.c, elems, c.split);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
}

namespace {

class Sm90Gemm final : public Gemm {
 public:
  explicit Sm90Gemm(Path path) : path_(path) {}
  std::string name() const override {
    return path_ == Path::Fused      ? "sm90-fused"
           : path_ == Path::TwoPhase ? "sm90-2phase"
           : path_ == Path::FusedV5  ? "sm90-fused-v5"
                                     : "sm90";
  }
  std::string description() const override {
    const std::string fused =
        "fused: E2M1 decoded exactly to fp16 with the block scale applied, B into wgmma register "
        "fragments by the MMA warps (C^T = B A^T), A once per problem by a prepass; persistent "
        "CTAs, deterministic split-K";
    const std::string two =
        "two-phase: A and B decoded once to fp16, then a persistent warp-specialised fp16 "
        "mainloop (TMA ring, producer warp, two consumer warpgroups, wgmma), split-K reduced in "
        "the kernel";
    if (path_ == Path::Fused) return "Hopper sm_90a, the fused path only (" + fused + ")";
    if (path_ == Path::FusedV5)
      return "Hopper sm_90a, the v5 fused path (development): a producer warp brings fp16 A, raw B "
             "and its scales into one ring stage, consumer warpgroups decode B from shared memory "
             "into wgmma register fragments for K block k+1 while wgmma k runs";
    if (path_ == Path::TwoPhase) return "Hopper sm_90a, the two-phase path only (" + two + ")";
    return "Hopper sm_90a, per shape one of two paths (two-phase from M = 1024, else fused) - " + fused + "; " + two +
           "; FP32 accumulation";
  }
  Availability availability(const DeviceInfo& dev) const override { return sm90::availability(dev); }
  std::string shape_error(const Shape& s) const override { return sm90::shape_error(s); }
  size_t workspace_bytes(const Shape& s) const override {
    return sm90::workspace_bytes(s, choose_config(s, current_sm_count(), path_));
  }
  void prepare(const Shape& s, const Operands&, cudaStream_t) override {
    config_ = choose_config(s, current_sm_count(), path_);
    prepared_for_ = s;
    prepared_ = true;
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    const bool same = prepared_ && prepared_for_.m == s.m && prepared_for_.n == s.n &&
                      prepared_for_.k == s.k && prepared_for_.l == s.l;
    const Config c = same ? config_ : choose_config(s, current_sm_count(), path_);
    launch(s, ops, c, workspace, stream);
  }
  // --kernel auto takes the per-shape choice; the forced paths are for comparisons.
  int auto_rank() const override { return path_ == Path::Auto ? 10 : 0; }

 private:
  Path path_;
  Config config_;
  Shape prepared_for_;
  bool prepared_ = false;
};

}  // namespace
}  // namespace nvfp4::sm90

namespace nvfp4 {
std::unique_ptr<Gemm> make_sm90_gemm() { return std::make_unique<sm90::Sm90Gemm>(sm90::Path::Auto); }
std::unique_ptr<Gemm> make_sm90_fused_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::Fused);
}
std::unique_ptr<Gemm> make_sm90_fused_v5_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::FusedV5);
}
std::unique_ptr<Gemm> make_sm90_two_phase_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::TwoPhase);
}
}  // namespace nvfp4
