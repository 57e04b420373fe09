// Verification rules, mismatch reports and sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "src/format/nvfp4.hpp"
#include "src/verify/verify.hpp"

using namespace nvfp4;

TEST(Verify, ToleranceAndNanInfRules) {
  const Tolerance t;
  EXPECT_TRUE(element_matches(1.0, 1.0, t));
  EXPECT_TRUE(element_matches(1.0019, 1.0, t));   // 1e-3 + 1e-3*1
  EXPECT_FALSE(element_matches(1.0021, 1.0, t));
  EXPECT_TRUE(element_matches(0.0009, 0.0, t));
  EXPECT_FALSE(element_matches(0.0011, 0.0, t));
  EXPECT_TRUE(element_matches(NAN, NAN, t));
  EXPECT_FALSE(element_matches(NAN, 1.0, t));
  EXPECT_FALSE(element_matches(1.0, NAN, t));
  EXPECT_TRUE(element_matches(INFINITY, INFINITY, t));
  EXPECT_FALSE(element_matches(INFINITY, -INFINITY, t));
  EXPECT_FALSE(element_matches(65504.0, INFINITY, t));
}

TEST(Verify, CountsMismatchesAndUnwritten) {
  const Shape s{2, 3, 16, 2};
  std::vector<uint16_t> exp(12), got(12);
  for (int i = 0; i < 12; ++i) exp[i] = got[i] = fp16_bits_from_double(i * 0.5);
  got[4] = fp16_bits_from_double(99.0);
  got[11] = kPoisonFp16;
  const auto r = verify_full(s, got.data(), exp.data(), {});
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.checked, 12);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.unwritten, 1);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].at, (Coord{0, 1, 1}));
  EXPECT_EQ(r.first[0].got, 99.0);
  EXPECT_EQ(r.first[0].expected, 2.0);
  EXPECT_EQ(r.first[1].at, (Coord{1, 1, 2}));
  EXPECT_TRUE(r.first[1].unwritten);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 97.0);
}

TEST(Verify, AllEqualPassesAndEmptyDoesNot) {
  const Shape s{1, 2, 16, 1};
  const std::vector<uint16_t> v = {0x3C00, 0x4000};
  EXPECT_TRUE(verify_full(s, v.data(), v.data(), {}).passed());
  EXPECT_FALSE(VerifyResult{}.passed());
}

TEST(Verify, SamplesAreDeterministicInRangeAndIncludeCorners) {
  const Shape s{7, 5, 16, 3};
  const auto a = sample_coords(s, 200, 9), b = sample_coords(s, 200, 9), c = sample_coords(s, 200, 10);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a[0], (Coord{0, 0, 0}));
  EXPECT_EQ(a[1], (Coord{2, 6, 4}));
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (const auto& x : a) {
    ASSERT_TRUE(x.batch >= 0 && x.batch < 3 && x.i >= 0 && x.i < 7 && x.j >= 0 && x.j < 5);
    seen.insert({x.batch, x.i, x.j});
  }
  EXPECT_GT(seen.size(), 80u);  // 105 cells, 200 draws
}
