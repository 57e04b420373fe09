// `sm90`: NVFP4 GEMM for Hopper (sm_90a) - host side: shape rules, the two paths' tile/split
// heuristics, the fused path's launch (v5, sm90_fused.cuh) and the Gemm objects. The registered
// kernel takes, per shape, the fused path or the two-phase path v4 (sm90_two_phase.cu), whichever
// its cost models say is faster.
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

namespace nvfp4::sm90 {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

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

}  // namespace

// v5 cost model, in microseconds on an H200 (132 SMs). A CTA spends per 64-wide K block of its unit
// 0.390 / 0.397 / 0.404 / 0.493 / 0.658 us for M tiles 16 / 32 / 64 / 128 / 256 (32 interpolated:
// not measured); per round of units (persistent CTAs: rounds = ceil(units / SMs)) 1.52 us of fill
// and epilogue, with split-K 1.57 us + 2.78 us per 128 rows of M tile more (its FP32 partial
// written), and the last split of a tile reads all partials (0.35 us per split per 128 rows, per
// round of tiles); the A prepass costs 1.32 us per million elements of A, and 5.25 us per call.
// Fitted (relative least squares over the configurations within 1.5x of each shape's fastest) to
// every M tile x split of the 34 shapes with M <= 512 of the two shipped sweep configs (sm90_bench
// --v5, 2026-11-30: the table in tests/unit/sm90_host_test.cpp) and of 26 shapes with M >= 384
// (sm90_bench --sweep, bench/results/h200/2026-12-01-sm90-nstep/fit/sweep-fused.txt).
double estimate_fused_us(const Shape& s, const Config& c, int sms) {
  double block_us = 0.0;
  switch (c.mt) {
    case 16: block_us = 0.3903; break;
    case 32: block_us = 0.3973; break;
    case 64: block_us = 0.4043; break;
    case 128: block_us = 0.4931; break;
    default: block_us = 0.6584; break;
  }
  const int64_t nk = s.k / kGranuleK;
  const int64_t tiles = v5_layout(s, c).tiles;
  const int64_t rounds = ceil_div(tiles * c.split, std::max(1, sms));
  const bool sk = c.split > 1;
  double t = double(rounds) * (double(ceil_div(nk, c.split)) * block_us + 1.5241 +
                               (sk ? 1.5683 + 2.7772 * c.mt / 128.0 : 0.0));
  if (sk) t += 0.3455 * double(ceil_div(tiles, std::max(1, sms))) * c.split * c.mt / 128.0;
  return t + 1.3209 * double(s.l) * double(s.m) * double(s.k) * 1e-6 + 5.2477;
}


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
  if (ceil_div(s.m, 128) * ceil_div(s.n, 128) > std::numeric_limits<int32_t>::max())
    return "too many 128x128 tiles for one grid";
  return {};
}

// Split clamped to [1, min(nk, the path's maximum)], then to the number of non-empty even
// shares of nk (both paths give split s the K blocks [s*nk/S, (s+1)*nk/S)).
Config normalize(const Shape& s, Config c) {
  const int64_t nk = std::max<int64_t>(1, s.k / kGranuleK);
  const int64_t max_split = c.version == 4 ? kMaxSplitV4 : kMaxSplitV5;
  c.split = static_cast<int>(std::clamp<int64_t>(c.split, 1, std::min<int64_t>(nk, max_split)));
  c.split = static_cast<int>(ceil_div(nk, ceil_div(nk, c.split)));
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

// The fused path's choice among the configurations the model was fitted to: the smallest M tile
// that holds M (16 at least, 256 at most), half of it, and 256 above M = 128; splits 1-6, 8, 12
// and 16 (partials under 1 GiB); cheapest by estimate_fused_us(), near-ties to the larger tile and
// the smaller split.
Config choose_fused_config(const Shape& s, int sms) {
  Config best;
  double best_t = std::numeric_limits<double>::infinity();
  const int64_t nk = s.k / kGranuleK;
  int cover = 16;
  while (cover < 256 && cover < s.m) cover *= 2;
  for (int mt : {256, 128, 64, 32, 16}) {
    if (mt != cover && 2 * mt != cover && !(mt == 256 && s.m > 128)) continue;
    for (int split : {1, 2, 3, 4, 5, 6, 8, 12, 16}) {
      if (split > nk) break;
      Config c;
      c.version = 5;
      c.mt = mt;
      c.split = split;
      c = normalize(s, c);
      if (c.split != split) continue;
      if (v5_layout(s, c).partial > (size_t(1) << 30)) break;
      const double t = estimate_fused_us(s, c, sms);
      if (t < best_t * 0.999) {
        best_t = t;
        best = c;
      }
    }
  }
  return best;
}

// The registered kernel's choice between the paths: the one its cost model says is faster. The
// fused path decodes B (and reads the fp16 A) once per M tile and wins where few M tiles share B;
// the two-phase one pays one decode pass over A and B and then runs the fp16 mainloop at its full
// rate, which wins at large M, and at M = 1024 where its narrower tiles fill the SMs (N = 576,
// 1536). Both models are fitted to the same H200's timings (bench/results/h200/2026-12-01-sm90-
// nstep/fit); tests/unit/sm90_host_test.cpp checks the choice against both paths timed on every
// shipped shape (the results folder's paths/).
Config choose_config(const Shape& s, int sms, Path path) {
  if (path == Path::TwoPhase) return choose_two_phase_config(s, sms);
  const Config fused = choose_fused_config(s, sms);
  if (path == Path::Fused) return fused;
  const Config two = choose_two_phase_config(s, sms);
  return estimate_two_phase_us(s, two, sms) < estimate_fused_us(s, fused, sms) ? two : fused;
}

size_t workspace_bytes(const Shape& s, const Config& c0) {
  const Config c = normalize(s, c0);
  if (c.version == 4) return two_phase_workspace_bytes(s, c);
  return v5_layout(s, c).total;
}

std::string describe(const Config& c) {
  if (c.version == 4)
    return fmt::format("two-phase {}x{} split {} group {}", c.f16_bm, c.f16_bn, c.split, c.f16_group);
  return fmt::format("fused {}x128 split {}", c.mt, c.split);
}

namespace {

void launch_v5(const Shape& s, const Operands& ops, const Config& c, void* workspace,
               cudaStream_t stream) {
  if (c.mt != 16 && c.mt != 32 && c.mt != 64 && c.mt != 128 && c.mt != 256)
    throw usage_error(fmt::format("sm90: fused M tile {} not built (16/32/64/128/256)", c.mt));
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
  if (s.k / 2 > std::numeric_limits<int32_t>::max()) throw usage_error("sm90: K too large for the fused path");
  p.kbytes = static_cast<int>(s.k / 2);
  p.kblocks = static_cast<int>(s.k / 16);
  p.tiles128 = w.tiles128;
  p.tiles_m = w.tiles_m;
  p.tiles_n = w.tiles_n;
  p.split = c.split;
  const int64_t units = int64_t(w.tiles) * c.split;
  if (units > std::numeric_limits<int32_t>::max() / 2)
    throw usage_error("sm90: too many fused work units for this shape");
  p.units = static_cast<int>(units);
  p.tma_store = s.n % 8 == 0 ? 1 : 0;  // C is 16-byte aligned (launch() checks)
  CUtensorMap tmc;
  std::memset(&tmc, 0, sizeof tmc);
  if (p.tma_store) {
    try {
      tmc = f16_detail::make_tmap_c(p.c, s.m, s.n, s.l, c.mt < 64 ? c.mt : 64);
    } catch (const std::runtime_error& e) {
      throw runtime_error(std::string("sm90 fused: ") + e.what());
    }
  }
  // The prepass decodes A into w.tiles128 tiles per batch and zeroes the split-K counters; it
  // triggers the main kernel (PDL) at its start.
  v5::PrepassParams pp{};
  pp.a = ops.a;
  pp.sfa = ops.sfa;
  pp.a16 = ws;
  pp.m = s.m;
  pp.k = s.k;
  pp.l = s.l;
  pp.nk = p.nk;
  pp.tiles128 = w.tiles128;
  pp.counters = p.counters;
  pp.ncounters = p.counters != nullptr ? w.tiles : 0;
  v5::launch_prepass(pp, stream);
  const int grid = static_cast<int>(std::min<int64_t>(units, current_sm_count()));
  switch (c.mt) {
    case 16: v5::launch_fused<16>(p, tmc, grid, stream); break;
    case 32: v5::launch_fused<32>(p, tmc, grid, stream); break;
    case 64: v5::launch_fused<64>(p, tmc, grid, stream); break;
    case 128: v5::launch_fused<128>(p, tmc, grid, stream); break;
    default: v5::launch_fused<256>(p, tmc, grid, stream); break;
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
  if (workspace == nullptr || misaligned(workspace, 256))
    throw runtime_error("sm90: needs a 256-byte aligned workspace (decoded operands)");
  if (c.version == 4) {
    launch_two_phase(s, ops, c, workspace, stream);
    return;
  }
  if (c.version != 5) throw usage_error(fmt::format("sm90: no version {} (4: two-phase, 5: fused)", c.version));
  launch_v5(s, ops, c, workspace, stream);
}

namespace {

class Sm90Gemm final : public Gemm {
 public:
  explicit Sm90Gemm(Path path) : path_(path) {}
  std::string name() const override {
    return path_ == Path::Fused ? "sm90-fused" : path_ == Path::TwoPhase ? "sm90-2phase" : "sm90";
  }
  std::string description() const override {
    const std::string fused =
        "fused: E2M1 decoded exactly to fp16 with the block scale applied, A once per problem by "
        "a prepass; a producer warp brings fp16 A, raw B and its scales into one ring stage, two "
        "consumer warpgroups decode B from shared memory into wgmma register fragments (C^T = B "
        "A^T) for the next K block while wgmma runs; persistent CTAs, deterministic split-K";
    const std::string two =
        "two-phase: A and B decoded once to fp16, then a persistent warp-specialised fp16 "
        "mainloop (TMA ring, producer warp, two consumer warpgroups, wgmma), split-K reduced in "
        "the kernel";
    if (path_ == Path::Fused) return "Hopper sm_90a, the fused path only (" + fused + ")";
    if (path_ == Path::TwoPhase) return "Hopper sm_90a, the two-phase path only (" + two + ")";
    return "Hopper sm_90a, per shape the faster of two paths by their cost models - " + fused + "; " + two +
           "; FP32 accumulation";
  }
  std::string configuration(const Shape& s) const override {
    return describe(choose_config(s, current_sm_count(), path_));
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
std::unique_ptr<Gemm> make_sm90_two_phase_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::TwoPhase);
}
}  // namespace nvfp4
