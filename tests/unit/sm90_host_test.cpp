// The sm90 kernel's host-checkable parts: the E2M1 decode bit trick (exhaustive), exactness of
// the scaled fp16 products, shape rules, availability, and the tile and path heuristics against
// the H200 timings their cost models were fitted to (tests/fixtures/sm90-fit/, in the tool's
// report format). No GPU needed. Configurations by name: sm90_config_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/registry/registry.hpp"
#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/heuristics.hpp"

using namespace nvfp4;

// ---------------------------------------------------------------------------------------------
// Host: the bit trick, every pair position, every pair of codes, neighbours set to all codes.

TEST(Sm90Decode, PairTrickMatchesCodecForEveryCode) {
  for (int i = 0; i < 4; ++i)
    for (unsigned lo = 0; lo < 16; ++lo)
      for (unsigned hi = 0; hi < 16; ++hi)
        for (unsigned fill = 0; fill < 16; ++fill) {
          uint32_t w = 0;
          for (int e = 0; e < 8; ++e) w |= uint32_t(fill) << (4 * e);
          w &= ~((0xFu << (4 * i)) | (0xFu << (4 * (i + 4))));
          w |= (lo << (4 * i)) | (hi << (4 * (i + 4)));
          const uint32_t r = sm90::e2m1x2_raw_rt(w, i);
          const double vlo = std::ldexp(fp16_bits_to_double(uint16_t(r & 0xFFFF)), 14);
          const double vhi = std::ldexp(fp16_bits_to_double(uint16_t(r >> 16)), 14);
          ASSERT_EQ(vlo, double(e2m1_decode(lo))) << i << " " << lo << " w=" << std::hex << w;
          ASSERT_EQ(vhi, double(e2m1_decode(hi))) << i << " " << hi << " w=" << std::hex << w;
          ASSERT_EQ(std::signbit(vlo), lo >= 8);
          ASSERT_EQ(std::signbit(vhi), hi >= 8);
        }
}

// raw (value * 2^-14) times fp16(scale * 2^7) is exact in fp16 for every code and every
// non-NaN scale byte (sign bit ignored), so the device multiply cannot round.
TEST(Sm90Decode, ScaledProductsAreExactInFp16) {
  for (unsigned sbyte = 0; sbyte < 256; ++sbyte) {
    const float sc = scale_decode(sbyte);
    if (std::isnan(sc)) continue;
    const double boost = double(sc) * sm90::kScaleBoost;
    ASSERT_EQ(fp16_bits_to_double(fp16_bits_from_double(boost)), boost) << sbyte;
    for (unsigned code = 0; code < 16; ++code) {
      const double raw = std::ldexp(double(e2m1_decode(code)), -14);
      const double prod = raw * boost;
      ASSERT_EQ(fp16_bits_to_double(fp16_bits_from_double(prod)), prod) << code << " " << sbyte;
      ASSERT_EQ(prod * 128.0, double(e2m1_decode(code)) * double(sc));
    }
  }
}

TEST(Sm90Gemm, ShapeRulesAndAvailability) {
  auto g = make_gemm("sm90", Role::Kernel);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->auto_rank(), 10);
  EXPECT_EQ(g->shape_error(Shape{128, 256, 64, 1}), "");
  EXPECT_NE(g->shape_error(Shape{128, 256, 48, 1}).find("multiple of 64"), std::string::npos);
  DeviceInfo a100;
  a100.has_gpu = true;
  a100.name = "NVIDIA A100";
  a100.cc_major = 8;
  a100.cc_minor = 0;
  const Availability av = g->availability(a100);
  EXPECT_FALSE(av.ok);
  EXPECT_NE(av.reason.find("NVIDIA A100"), std::string::npos) << av.reason;
  EXPECT_NE(av.reason.find("8.0"), std::string::npos) << av.reason;
  DeviceInfo h200 = a100;
  h200.name = "NVIDIA H200";
  h200.cc_major = 9;
  EXPECT_TRUE(g->availability(h200).ok);
}

// The heuristic's purpose at M = 128: one wave that fills most of the 132 SMs (split-K units,
// or stream-K's workers).
TEST(Sm90Gemm, HeuristicFillsTheGpuAtSmallM) {
  for (const Shape s : {Shape{128, 7168, 16384, 1}, Shape{128, 4096, 7168, 1},
                        Shape{128, 7168, 2048, 1}}) {
    const sm90::Config c = sm90::choose_config(s, 132);
    EXPECT_EQ(c.path, sm90::Path::Fused) << sm90::describe(c);  // the fused path at M = 128
    const int64_t ctas = c.fused.workers > 0 ? c.fused.workers
                                             : ((s.n + 127) / 128) * ((s.m + c.fused.m_tile - 1) / c.fused.m_tile) * c.fused.split;
    EXPECT_LE(ctas, 132) << sm90::describe(c);
    EXPECT_GE(ctas, 100) << sm90::describe(c);
  }
}

// ---------------------------------------------------------------------------------------------
// The cost models against the timings they were fitted to: reports under tests/fixtures/sm90-fit/
// (scripts/sm90_fit_fixture.py converted the H200 runs; docs/kernels.md says how the tool remakes
// them). Per shape, every timed configuration of each path, keyed as describe() spells it.
namespace {

using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;
using Timings = std::map<ShapeKey, std::map<std::string, double>>;

struct PathTimings {
  Timings two_phase, fused;
};

// A configuration timed twice for a shape keeps the lower median.
PathTimings read_fixture(const std::string& name) {
  const std::string file = NVFP4_SOURCE_DIR "/tests/fixtures/sm90-fit/" + name;
  std::ifstream in(file);
  EXPECT_TRUE(in.good()) << "cannot read " << file;
  PathTimings t;
  if (!in.good()) return t;
  const nlohmann::json report = nlohmann::json::parse(in);
  for (const auto& c : report.at("cases")) {
    const auto& p = c.at("problem");
    if (p.value("l", 1) != 1) continue;
    const std::string config = c.at("kernel").at("configuration");
    sm90::Config parsed;
    EXPECT_EQ(sm90::parse_config(config, &parsed), "") << file << ": " << config;
    const double us = c.at("kernel_timing").at("stats").at("median_us");
    auto& timed = (parsed.path == sm90::Path::TwoPhase ? t.two_phase : t.fused)[ShapeKey{
        p.at("m").get<int64_t>(), p.at("n").get<int64_t>(), p.at("k").get<int64_t>()}];
    const auto [it, fresh] = timed.emplace(config, us);
    if (!fresh) it->second = std::min(it->second, us);
  }
  return t;
}

const PathTimings& fit_timings() {
  static const PathTimings t = read_fixture("fit.json");
  return t;
}

std::string name_of(const ShapeKey& s) {
  return std::to_string(std::get<0>(s)) + "x" + std::to_string(std::get<1>(s)) + "x" + std::to_string(std::get<2>(s));
}
Shape shape_of(const ShapeKey& s) { return Shape{std::get<0>(s), std::get<1>(s), std::get<2>(s), 1}; }
double fastest(const std::map<std::string, double>& t) {
  double best = 1e300;
  for (const auto& [k, us] : t) best = std::min(best, us);
  return best;
}
sm90::Config as_config(const sm90::FusedConfig& f) {
  sm90::Config c;
  c.path = sm90::Path::Fused;
  c.fused = f;
  return c;
}
sm90::Config as_config(const sm90::TwoPhaseConfig& t) {
  sm90::Config c;
  c.path = sm90::Path::TwoPhase;
  c.two_phase = t;
  return c;
}

}  // namespace

// The fused path's choice against its own H200 timing at M <= 512 (small-m.json: every M tile x
// split its chooser weighs, on the 34 shapes with M <= 512 of the two shipped sweep configs, 15
// cold samples each, GPU MODE data, one run: bench/notes-sm90.md, "v5"). The pick must be one of
// the timed configurations and within 8 % of the fastest of them.
// fit.json's fused timings at M <= 512 (the sweep of configs/sm90-fit.json times every shape
// of it) are held to the same bound. These hold split-K timings only: the split-K pick is
// checked here, stream-K against it below (StreamKChoiceIsNearTheFasterOfThePair).
TEST(Sm90Gemm, FusedChoiceIsNearTheMeasuredBest) {
  const Timings small = read_fixture("small-m.json").fused;
  ASSERT_GE(small.size(), 34u);
  std::vector<std::pair<ShapeKey, std::map<std::string, double>>> runs(small.begin(), small.end());
  for (const auto& [key, timed] : fit_timings().fused)
    if (std::get<0>(key) <= 512) runs.emplace_back(key, timed);
  double worst = 1.0;
  for (const auto& [key, timed] : runs) {
    const sm90::Config c = as_config(sm90::choose_fused_split_k(shape_of(key), 132));
    const auto it = timed.find(sm90::describe(c));
    ASSERT_NE(it, timed.end()) << name_of(key) << ": " << sm90::describe(c) << " was not timed";
    EXPECT_LE(it->second, 1.08 * fastest(timed)) << name_of(key) << ": " << sm90::describe(c);
    worst = std::max(worst, it->second / fastest(timed));
  }
  EXPECT_LT(worst, 1.08);
}

// Stream-K against the split-K pick, timed one after the other in one H200 run on each of the 32
// shipped shapes with M <= 512 where stream-K is listed (streamk.json; the kernel of commit
// 3f0364f, as it is now). choose_fused takes one of the two - the split-K one being
// choose_fused_split_k's - and the one it takes is within 2 % of the faster (the model's worst:
// 1.6 %, 16x7168x16384); it takes stream-K wherever stream-K measured >= 4 % faster (6 shapes,
// up to 1.22x at 128x36864x7168) and nowhere it measured >= 4 % slower.
TEST(Sm90Gemm, StreamKChoiceIsNearTheFasterOfThePair) {
  const Timings pairs = read_fixture("streamk.json").fused;
  ASSERT_EQ(pairs.size(), 32u);
  int stream_k = 0, faster = 0;
  for (const auto& [key, timed] : pairs) {
    ASSERT_EQ(timed.size(), 2u) << name_of(key);
    const Shape s = shape_of(key);
    const sm90::FusedConfig pick = sm90::choose_fused_split_k(s, 132);
    const std::string split_k = sm90::describe(as_config(pick));
    const std::string sk = sm90::describe(as_config(sm90::FusedConfig{pick.m_tile, 1, 132}));
    ASSERT_TRUE(timed.count(split_k) && timed.count(sk)) << name_of(key) << ": " << split_k << " / " << sk;
    const std::string chosen = sm90::describe(as_config(sm90::choose_fused(s, 132)));
    ASSERT_TRUE(chosen == split_k || chosen == sk) << name_of(key) << ": " << chosen;
    EXPECT_LE(timed.at(chosen), 1.02 * fastest(timed)) << name_of(key) << ": " << chosen;
    const double gain = timed.at(split_k) / timed.at(sk);
    if (gain >= 1.04) {
      EXPECT_EQ(chosen, sk) << name_of(key) << ": stream-K " << gain << "x faster";
    } else if (gain <= 1 / 1.04) {
      EXPECT_EQ(chosen, split_k) << name_of(key) << ": stream-K " << gain << "x";
    }
    stream_k += chosen == sk;
    faster += gain >= 1.04;
  }
  EXPECT_EQ(faster, 6);
  EXPECT_GE(stream_k, faster);
  // Above M = 512 (no stream-K timings) the split-K pick stands.
  for (const Shape s : {Shape{1024, 7168, 16384, 1}, Shape{1024, 57344, 8192, 1}, Shape{2048, 8192, 8192, 1}})
    EXPECT_EQ(sm90::choose_fused(s, 132).workers, 0) << s.m << "x" << s.n << "x" << s.k;
}

// The two-phase path's pick (tile 128 x 16..256 or 256x128, split 1-8) on the 37 shapes timed
// with every one of those configurations: timed, within 10 % of the fastest on every shape and
// 2 % on average (the model's own figures: 9.0 % worst, at 256x7168x256, 0.9 % mean).
TEST(Sm90Gemm, TwoPhaseChoiceIsNearTheMeasuredBest) {
  const Timings& two = fit_timings().two_phase;
  ASSERT_GE(two.size(), 37u);
  double log_sum = 0.0;
  for (const auto& [key, timed] : two) {
    ASSERT_GE(timed.size(), 17u) << name_of(key);  // every tile at split 1 at least
    const sm90::Config c = as_config(sm90::choose_two_phase(shape_of(key), 132));
    const auto it = timed.find(sm90::describe(c));
    ASSERT_NE(it, timed.end()) << name_of(key) << ": " << sm90::describe(c) << " was not timed";
    EXPECT_LE(it->second, 1.10 * fastest(timed)) << name_of(key) << ": " << sm90::describe(c);
    log_sum += std::log(it->second / fastest(timed));
  }
  EXPECT_LT(std::exp(log_sum / double(two.size())), 1.02);
}

// The fused path's pick at M >= 384 (the model was first fitted at M <= 512 only and chose
// split 4 at 1024x7168x16384, 21 % slower than split 1): within 4 % of the fastest timed (the
// refitted model's picks are within 0.1 % there).
TEST(Sm90Gemm, FusedChoiceIsNearTheMeasuredBestAtLargeM) {
  int shapes = 0;
  for (const auto& [key, timed] : fit_timings().fused) {
    if (std::get<0>(key) < 384) continue;
    ++shapes;
    const sm90::Config c = as_config(sm90::choose_fused(shape_of(key), 132));
    const auto it = timed.find(sm90::describe(c));
    ASSERT_NE(it, timed.end()) << name_of(key) << ": " << sm90::describe(c) << " was not timed";
    EXPECT_LE(it->second, 1.04 * fastest(timed)) << name_of(key) << ": " << sm90::describe(c);
  }
  EXPECT_GE(shapes, 26);
}

// The path choice (the lower of the two models' estimates) against both paths' picks timed in
// the same run, on the shapes with M >= 384 and both paths' sweeps: the chosen path within 5 %
// of the faster one. The models' estimates themselves are within 15 % of the timings there.
TEST(Sm90Gemm, PathChoiceIsNearTheMeasuredFasterPath) {
  const PathTimings& t = fit_timings();
  int both = 0;
  for (const auto& [key, timed2] : t.two_phase) {
    const auto f = t.fused.find(key);
    if (f == t.fused.end() || std::get<0>(key) < 384) continue;
    ++both;
    const Shape s = shape_of(key);
    const sm90::Config c2 = as_config(sm90::choose_two_phase(s, 132));
    const sm90::Config cf = as_config(sm90::choose_fused(s, 132));
    ASSERT_TRUE(timed2.count(sm90::describe(c2)) && f->second.count(sm90::describe(cf))) << name_of(key);
    const double us2 = timed2.at(sm90::describe(c2)), usf = f->second.at(sm90::describe(cf));
    EXPECT_NEAR(sm90::estimate_two_phase_us(s, c2.two_phase, 132) / us2, 1.0, 0.15) << name_of(key);
    EXPECT_NEAR(sm90::estimate_fused_us(s, cf.fused, 132) / usf, 1.0, 0.15) << name_of(key);
    const sm90::Config c = sm90::choose_config(s, 132);
    EXPECT_LE(c.path == sm90::Path::TwoPhase ? us2 : usf, 1.05 * std::min(us2, usf))
        << name_of(key) << ": " << sm90::describe(c) << " (two-phase " << us2 << " us, fused " << usf << " us)";
  }
  EXPECT_GE(both, 26);
  // Of the 26 shapes of the fit with both paths timed, two-phase at these 8; fused at the other
  // 18 (M = 2048 and the short-K M = 4096 shapes included, each within 2 % of the two-phase path
  // or faster).
  const Shape two_phase_at[] = {{1024, 576, 7168, 1},  {1024, 1536, 7168, 1}, {2304, 4608, 7168, 1},
                                {4096, 576, 7168, 1},  {4096, 1536, 7168, 1}, {4096, 4096, 4096, 1},
                                {4096, 4096, 7168, 1}, {4096, 8192, 8192, 1}};
  for (const Shape& s : two_phase_at)
    EXPECT_EQ(sm90::choose_config(s, 132).path, sm90::Path::TwoPhase) << s.m << "x" << s.n << "x" << s.k;
  EXPECT_EQ(sm90::choose_config(Shape{2048, 8192, 8192, 1}, 132).path, sm90::Path::Fused);
  // Where M <= 128 the fused path is at least 1.14x faster on every shipped shape (both paths
  // timed: bench/notes-sm90.md); the models agree.
  for (const Shape s : {Shape{16, 576, 7168, 1}, Shape{16, 57344, 8192, 1}, Shape{128, 7168, 16384, 1},
                        Shape{128, 576, 7168, 1}, Shape{128, 32768, 512, 1}, Shape{128, 256, 256, 1}})
    EXPECT_EQ(sm90::choose_config(s, 132).path, sm90::Path::Fused) << s.m << "x" << s.n << "x" << s.k;
}

// Held out (heldout.json): 10 shapes in none of the fits (M 1024-8192, N 768-6144, K 2048-8192,
// one ragged), both paths' every configuration timed after the models were fixed (one H200
// run). The registered choice must be within 3 % of the fastest configuration of either path
// (run-to-run noise of one configuration there is about 1 %; it was the fastest on all 10).
TEST(Sm90Gemm, ChoiceIsNearTheFastestOnHeldOutShapes) {
  const PathTimings held = read_fixture("heldout.json");
  ASSERT_GE(held.two_phase.size(), 10u);
  for (const auto& [key, timed2] : held.two_phase) {
    ASSERT_TRUE(held.fused.count(key)) << name_of(key);
    const double best = std::min(fastest(timed2), fastest(held.fused.at(key)));
    const sm90::Config c = sm90::choose_config(shape_of(key), 132);
    const auto& timed = c.path == sm90::Path::TwoPhase ? timed2 : held.fused.at(key);
    const auto it = timed.find(sm90::describe(c));
    ASSERT_NE(it, timed.end()) << name_of(key) << ": " << sm90::describe(c) << " was not timed";
    EXPECT_LE(it->second, 1.03 * best) << name_of(key) << ": " << sm90::describe(c);
  }
}

// The registered kernel takes either path; the forced ones exist for side-by-side runs and are
// never picked by --kernel auto; the mainloop alone is a peer with the tool's numerics.
TEST(Sm90Gemm, PathsAndMainloopAreRegistered) {
  const std::pair<const char*, int> kernels[] = {{"sm90", 10}, {"sm90-fused", 0}, {"sm90-2phase", 0}};
  for (const auto& [name, rank] : kernels) {
    const auto g = make_gemm(name, Role::Kernel);
    ASSERT_TRUE(g) << name;
    EXPECT_EQ(g->name(), name);
    EXPECT_EQ(g->auto_rank(), rank) << name;
    EXPECT_EQ(g->shape_error(Shape{128, 256, 96, 1}), "K must be a multiple of 64 (the sm90 kernel's K granule)") << name;
  }
  const auto peer = make_gemm("sm90-f16-predeq", Role::Peer);
  ASSERT_TRUE(peer);
  EXPECT_EQ(peer->role(), Role::Peer);
  EXPECT_TRUE(peer->same_numerics());
  EXPECT_EQ(peer->auto_rank(), 0);
  // Forced paths choose what their path's heuristic chooses, whatever M is.
  const Shape big{4096, 4096, 4096, 1}, small{128, 7168, 16384, 1};
  EXPECT_EQ(sm90::choose_config(big, 132, sm90::Path::Fused).path, sm90::Path::Fused);
  EXPECT_EQ(sm90::choose_config(small, 132, sm90::Path::TwoPhase).path, sm90::Path::TwoPhase);
  EXPECT_EQ(sm90::choose_config(big, 132).path, sm90::Path::TwoPhase);
  EXPECT_EQ(sm90::choose_config(small, 132).path, sm90::Path::Fused);
  // The two-phase path carries the mainloop heuristic's whole choice, its raster group included.
  EXPECT_EQ(sm90::choose_config(big, 132).two_phase.group, 16);
  // The report names what ran per problem (132 SMs assumed without a GPU): N = 576 at M = 4096
  // takes four 144-wide two-phase tiles; the forced paths name their own path's choice.
  EXPECT_EQ(make_gemm("sm90", Role::Kernel)->configuration(Shape{4096, 576, 7168, 1}),
            "two-phase 128x144 split 1 group 16");
  EXPECT_EQ(make_gemm("sm90-fused", Role::Kernel)->configuration(Shape{4096, 576, 7168, 1}).rfind("fused ", 0), 0u);
  EXPECT_EQ(make_gemm("sm90", Role::Kernel)->configuration(small), "fused 128x128 stream-k 132");
  // The two-phase workspace holds both fp16 operands.
  EXPECT_GE(sm90::workspace_bytes(big, sm90::choose_config(big, 132)), size_t(2) * 4096 * 4096 * 2);
}
