// Operand generation: deterministic, distributions as documented, blocked scales padded with 0.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "src/problem/problem.hpp"

using namespace nvfp4;

static HostTensors make(const Problem& p) {
  HostTensors t;
  t.allocate(p.shape);
  generate_host(p, t);
  return t;
}

TEST(Generate, SameSeedSameBytesOtherSeedOtherBytes) {
  Problem p{{64, 32, 128, 2}, Dist::GpuMode, 7};
  const auto t1 = make(p), t2 = make(p);
  EXPECT_EQ(t1.a, t2.a);
  EXPECT_EQ(t1.sfb, t2.sfb);
  p.seed = 8;
  const auto t3 = make(p);
  EXPECT_NE(t1.a, t3.a);
  EXPECT_NE(t1.b, t3.b);
}

TEST(Generate, AAndBDiffer) {
  const auto t = make({{32, 32, 64, 1}, Dist::GpuMode, 1});
  EXPECT_NE(t.a, t.b);
}

TEST(Generate, GpuModeNibblesUniformScalesFromZeroToThree) {
  const auto t = make({{256, 256, 1024, 1}, Dist::GpuMode, 3});
  std::array<int64_t, 16> counts{};
  for (uint8_t byte : t.a) {
    ++counts[byte & 15];
    ++counts[byte >> 4];
  }
  const double expected = double(t.a.size()) * 2 / 16;
  for (int c = 0; c < 16; ++c) EXPECT_NEAR(counts[c], expected, 0.03 * expected) << c;
  std::array<int64_t, 4> sc{};
  for (uint8_t s : t.sfa) {
    const float v = scale_decode(s);
    ASSERT_TRUE(v == 0 || v == 1 || v == 2 || v == 3) << int(s);
    ++sc[int(v)];
  }
  for (int v = 0; v < 4; ++v) EXPECT_NEAR(sc[v], t.sfa.size() / 4.0, 0.05 * t.sfa.size() / 4.0);
}

TEST(Generate, NormalIsQuantizedPerBlockWithAmaxOverSix) {
  const Problem p{{64, 64, 256, 1}, Dist::Normal, 11};
  const auto t = make(p);
  const int64_t kbs = p.shape.k / 16;
  int saturated = 0, blocks = 0;
  double sum = 0, sum2 = 0;
  int64_t n = 0;
  for (int64_t r = 0; r < p.shape.m; ++r)
    for (int64_t kb = 0; kb < kbs; ++kb) {
      const float s = scale_decode(t.sfa[r * kbs + kb]);
      ASSERT_GT(s, 0.0f);
      ASSERT_EQ(t.sfa[r * kbs + kb] & 0x80, 0);
      float amax_code = 0;
      for (int e = 0; e < 16; ++e) {
        const float v = e2m1_decode(fp4_at(t.a.data() + r * p.shape.k / 2, kb * 16 + e));
        amax_code = std::max(amax_code, std::fabs(v));
        sum += v * s;
        sum2 += double(v * s) * double(v * s);
        ++n;
      }
      // amax/6 rounded to e4m3 maps the largest element to about 6.
      EXPECT_GE(amax_code, 4.0f);
      saturated += amax_code == 6.0f;
      ++blocks;
    }
  EXPECT_GT(saturated, blocks / 2);
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 1.0, 0.15);  // quantization changes the variance a little
}

TEST(Generate, IrwinHallIsExactAndCentred) {
  EXPECT_EQ(irwin_hall_normal(0, 0, 0), -393210.0f / 65536.0f);
  EXPECT_EQ(irwin_hall_normal(~0ull, ~0ull, ~0ull), 393210.0f / 65536.0f);
}

TEST(Generate, BlockedScalesMatchLinearAndPaddingIsZero) {
  const Problem p{{130, 70, 16 * 6, 2}, Dist::GpuMode, 5};
  const auto t = make(p);
  const auto lay = ScaleLayout::make(p.shape.m, p.shape.k, p.shape.l);
  std::vector<bool> used(size_t(lay.blocked_bytes()), false);
  for (int64_t b = 0; b < p.shape.l; ++b)
    for (int64_t r = 0; r < p.shape.m; ++r)
      for (int64_t c = 0; c < lay.kblocks; ++c) {
        EXPECT_EQ(t.sfa_blocked[size_t(lay.blocked_offset(r, c, b))], t.sfa[size_t(lay.linear_offset(r, c, b))]);
        used[size_t(lay.blocked_offset(r, c, b))] = true;
      }
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i]) {
      ASSERT_EQ(t.sfa_blocked[i], 0) << "padding byte " << i;
    }
}

TEST(Problem, RejectsBadShapesNamingTheField) {
  auto msg = [](Shape s) {
    try {
      validate_shape(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(msg({0, 8, 16, 1}).find("--m 0"), std::string::npos);
  EXPECT_NE(msg({8, -3, 16, 1}).find("--n -3"), std::string::npos);
  EXPECT_NE(msg({8, 8, 24, 1}).find("--k 24: must be a multiple of 16"), std::string::npos);
  EXPECT_NE(msg({8, 8, 16, 0}).find("--l 0"), std::string::npos);
  EXPECT_NE(msg({1ll << 40, 1ll << 40, 1ll << 20, 1}).find("overflows 64 bits"), std::string::npos);
  EXPECT_EQ(msg({1, 1, 16, 1}), "accepted");
}

TEST(Problem, TensorBytesCountPaddedScales) {
  const auto t = TensorBytes::of({130, 70, 16 * 6, 2});
  EXPECT_EQ(t.a, 2 * 130 * 48);
  EXPECT_EQ(t.sfa, 2 * 130 * 6);
  EXPECT_EQ(t.sfa_blocked, 2 * 256 * 8);
  EXPECT_EQ(t.sfb_blocked, 2 * 128 * 8);
  EXPECT_EQ(t.c, 2 * 130 * 70 * 2);
  EXPECT_EQ(t.min_traffic(), t.a + t.b + t.sfa_blocked + t.sfb_blocked + t.c);
}
