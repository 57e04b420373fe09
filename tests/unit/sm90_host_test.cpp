// The sm90 kernel's host-checkable parts: the E2M1 decode bit trick (exhaustive), exactness of
// the scaled fp16 products, shape rules, availability and the tile heuristic. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/registry/registry.hpp"
#include "kernels/sm90/sm90_decode.hpp"
#include "kernels/sm90/sm90_gemm.hpp"

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

// The heuristic's purpose at M = 128: one wave that fills most of the 132 SMs.
TEST(Sm90Gemm, HeuristicFillsTheGpuAtSmallM) {
  for (const Shape s : {Shape{128, 7168, 16384, 1}, Shape{128, 4096, 7168, 1},
                        Shape{128, 7168, 2048, 1}}) {
    const sm90::Config c = sm90::choose_config(s, 132);
    EXPECT_EQ(c.version, 3) << sm90::describe(c);  // the fused path at M = 128
    const int64_t ctas = ((s.n + c.bn - 1) / c.bn) * c.split;
    EXPECT_LE(ctas, 132) << sm90::describe(c);
    EXPECT_GE(ctas, 100) << sm90::describe(c);
  }
}

// The v3 cost model must pick the split measured fastest on the H200 for each shape it was
// fitted to (every split 1..16 timed in one run: commit c0ec880, bench/results/h200/sm90-dev/run9-v3-smemb/
// c-bench.txt). The old model picked split 3 for 384x7168x2304 (59.2 us against 49.2 for
// split 1) and split 10 for 128x1536x7168 (25.3 against 24.7 for split 7).
TEST(Sm90Gemm, HeuristicPicksTheMeasuredBestSplit) {
  const struct {
    Shape s;
    int split;
  } cases[] = {{{128, 7168, 16384, 1}, 2}, {{128, 4096, 7168, 1}, 4},  {{128, 7168, 2048, 1}, 2},
               {{256, 7168, 2048, 1}, 1},  {{512, 4096, 7168, 1}, 1},  {{1024, 7168, 16384, 1}, 2},
               {{4096, 4096, 4096, 1}, 1}, {{8192, 8192, 8192, 1}, 1}, {{128, 1536, 7168, 1}, 7},
               {{384, 7168, 2304, 1}, 1}};
  for (const auto& t : cases) {
    const sm90::Config c = sm90::choose_fused_config(t.s, 132);
    EXPECT_EQ(c.version, 3);
    EXPECT_EQ(c.mt, 128);
    EXPECT_EQ(c.split, t.split) << t.s.m << "x" << t.s.n << "x" << t.s.k << ": " << sm90::describe(c);
  }
}

// The path choice against the H200 timing of both paths on every shape of the two shipped sweep
// configs (median us, 20 cold samples each, one run: bench/results/h200/2026-11-30-sm90-2phase/
// paths). The chosen path must be within 5 % of the faster one on every shape; the one shape
// where the rule loses is 384x7168x2304 (fused 48.7 us, two-phase 46.9 us).
TEST(Sm90Gemm, PathChoiceIsNearTheMeasuredFasterPath) {
  const struct {
    Shape s;
    double fused_us, two_phase_us;
  } measured[] = {
      {{16, 576, 7168, 1}, 23.3, 26.9},
      {{16, 1536, 7168, 1}, 23.9, 36.5},
      {{16, 4096, 7168, 1}, 29.1, 57.7},
      {{16, 7168, 2048, 1}, 20.8, 38.3},
      {{16, 7168, 16384, 1}, 76.8, 173.1},
      {{16, 7168, 18432, 1}, 85.3, 204.5},
      {{16, 8192, 8192, 1}, 46.0, 117.3},
      {{16, 8192, 28672, 1}, 126.9, 299.2},
      {{16, 10240, 8192, 1}, 65.8, 121.3},
      {{16, 24576, 1536, 1}, 36.9, 63.1},
      {{16, 32768, 512, 1}, 19.3, 31.3},
      {{16, 36864, 7168, 1}, 182.5, 413.4},
      {{16, 57344, 8192, 1}, 280.9, 606.5},
      {{128, 256, 256, 1}, 9.5, 12.5},
      {{128, 576, 7168, 1}, 23.8, 28.0},
      {{128, 1536, 7168, 1}, 24.6, 34.4},
      {{128, 3072, 1536, 1}, 16.7, 22.2},
      {{128, 4096, 7168, 1}, 30.0, 54.3},
      {{128, 7168, 2048, 1}, 21.6, 32.4},
      {{128, 7168, 16384, 1}, 78.9, 159.6},
      {{128, 7168, 18432, 1}, 89.6, 177.1},
      {{128, 8192, 8192, 1}, 47.2, 99.5},
      {{128, 8192, 28672, 1}, 132.5, 299.4},
      {{128, 10240, 8192, 1}, 67.7, 122.0},
      {{128, 24576, 1536, 1}, 38.4, 59.5},
      {{128, 32768, 512, 1}, 20.4, 30.0},
      {{128, 36864, 7168, 1}, 187.6, 346.9},
      {{128, 57344, 8192, 1}, 287.9, 558.2},
      {{256, 7168, 256, 1}, 9.7, 14.7},
      {{256, 7168, 2048, 1}, 25.3, 33.2},
      {{384, 7168, 2304, 1}, 48.7, 46.9},
      {{512, 512, 7168, 1}, 27.8, 29.7},
      {{512, 1536, 7168, 1}, 43.4, 44.0},
      {{512, 4096, 512, 1}, 12.1, 17.4},
      {{1024, 576, 7168, 1}, 40.2, 40.1},
      {{1024, 1536, 7168, 1}, 70.8, 57.1},
      {{1024, 4096, 7168, 1}, 129.6, 105.5},
      {{1024, 7168, 2048, 1}, 81.1, 63.2},
      {{1024, 7168, 16384, 1}, 531.6, 426.7},
      {{1024, 7168, 18432, 1}, 583.0, 478.4},
      {{1024, 8192, 8192, 1}, 288.1, 228.4},
      {{1024, 8192, 28672, 1}, 989.8, 809.9},
      {{1024, 10240, 8192, 1}, 346.3, 303.6},
      {{1024, 24576, 1536, 1}, 183.3, 138.4},
      {{1024, 32768, 512, 1}, 113.3, 76.9},
      {{1024, 36864, 7168, 1}, 1083.7, 889.4},
      {{1024, 57344, 8192, 1}, 1939.9, 1605.2},
      {{2304, 4608, 7168, 1}, 314.9, 233.7},
      {{4096, 576, 7168, 1}, 144.2, 104.9},
      {{4096, 1536, 7168, 1}, 220.5, 157.7},
      {{4096, 4096, 7168, 1}, 519.5, 365.9},
      {{4096, 7168, 2048, 1}, 278.8, 183.6},
      {{4096, 7168, 16384, 1}, 1975.6, 1389.8},
      {{4096, 7168, 18432, 1}, 2216.7, 1576.7},
      {{4096, 8192, 8192, 1}, 1147.0, 791.3},
      {{4096, 8192, 28672, 1}, 3902.0, 2794.4},
      {{4096, 10240, 8192, 1}, 1411.9, 1007.1},
      {{4096, 24576, 1536, 1}, 702.8, 473.3},
      {{4096, 32768, 512, 1}, 421.7, 245.4},
      {{4096, 36864, 7168, 1}, 4311.0, 3074.8},
      {{4096, 57344, 8192, 1}, 7491.5, 5478.8}};
  int two_phase = 0;
  for (const auto& t : measured) {
    const sm90::Config c = sm90::choose_config(t.s, 132);
    const bool chose_two = c.version == 4;
    two_phase += chose_two;
    const double got = chose_two ? t.two_phase_us : t.fused_us;
    EXPECT_LE(got, 1.05 * std::min(t.fused_us, t.two_phase_us))
        << t.s.m << "x" << t.s.n << "x" << t.s.k << ": " << sm90::describe(c);
  }
  EXPECT_EQ(two_phase, 27);  // every M >= 1024 case of the 61
}

// The registered kernel takes either path; the forced ones exist for side-by-side runs and are
// never picked by --kernel auto; the mainloop alone is a peer with the tool's numerics.
TEST(Sm90Gemm, PathsAndMainloopAreRegistered) {
  const std::pair<const char*, int> kernels[] = {{"sm90", 10}, {"sm90-fused", 0}, {"sm90-2phase", 0},
                                                     {"sm90-fused-v5", 0}};
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
  EXPECT_EQ(sm90::choose_config(big, 132, sm90::Path::Fused).version, 3);
  EXPECT_EQ(sm90::choose_config(small, 132, sm90::Path::TwoPhase).version, 4);
  EXPECT_EQ(sm90::choose_config(big, 132).version, 4);
  EXPECT_EQ(sm90::choose_config(small, 132).version, 3);
  // The two-phase path carries the mainloop heuristic's whole choice, its raster group included.
  EXPECT_EQ(sm90::choose_config(big, 132).f16_group, 16);
  // The two-phase workspace holds both fp16 operands.
  EXPECT_GE(sm90::workspace_bytes(big, sm90::choose_config(big, 132)), size_t(2) * 4096 * 4096 * 2);
}
