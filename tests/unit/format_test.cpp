// The format library: exhaustive codecs, packing, fp16 rounding and both scale layouts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "src/format/nvfp4.hpp"

using namespace nvfp4;

TEST(E2M1, DecodesEveryCode) {
  const float expect[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (unsigned c = 0; c < 16; ++c) {
    EXPECT_EQ(e2m1_decode(c), expect[c]) << c;
    EXPECT_EQ(std::signbit(e2m1_decode(c)), c >= 8) << c;
    EXPECT_EQ(e2m1_twice(c), int(2 * expect[c])) << c;
  }
}

TEST(E2M1, EncodeRoundTripsEveryCode) {
  for (unsigned c = 0; c < 16; ++c) EXPECT_EQ(e2m1_encode(e2m1_decode(c)), c) << c;
}

// Brute force: the nearest representable magnitude, ties to the even code.
static unsigned e2m1_nearest(float x) {
  unsigned best = 0;
  float best_d = INFINITY;
  for (unsigned c = 0; c < 8; ++c) {
    const float d = std::fabs(std::fabs(x) - e2m1_decode(c));
    if (d < best_d || (d == best_d && (c % 2) == 0)) best = c, best_d = d;
  }
  return best | (std::signbit(x) ? 8u : 0u);
}

TEST(E2M1, EncodeIsRoundToNearestEvenAndSaturates) {
  for (int i = -800; i <= 800; ++i) {  // steps of 1/100 across and beyond the range, ties included
    const float x = i / 100.0f;
    EXPECT_EQ(e2m1_encode(x), e2m1_nearest(x)) << x;
  }
  for (float x : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f})  // every tie exactly
    EXPECT_EQ(e2m1_encode(x), e2m1_nearest(x)) << x;
  EXPECT_EQ(e2m1_encode(1e30f), 7u);
  EXPECT_EQ(e2m1_encode(-INFINITY), 15u);
  EXPECT_EQ(e2m1_encode(NAN), 0u);
}

TEST(E4M3, DecodesKnownValues) {
  EXPECT_EQ(e4m3_decode(0x00), 0.0f);
  EXPECT_EQ(e4m3_decode(0x01), std::ldexp(1.0f, -9));   // min subnormal
  EXPECT_EQ(e4m3_decode(0x08), std::ldexp(1.0f, -6));   // min normal
  EXPECT_EQ(e4m3_decode(0x38), 1.0f);
  EXPECT_EQ(e4m3_decode(0x40), 2.0f);
  EXPECT_EQ(e4m3_decode(0x44), 3.0f);
  EXPECT_EQ(e4m3_decode(0x7E), 448.0f);
  EXPECT_EQ(e4m3_decode(0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3_decode(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_decode(0xFF)));
}

TEST(E4M3, EveryCodeIsDistinctAndRoundTrips) {
  std::set<float> seen;
  for (unsigned c = 0; c < 256; ++c) {
    const float v = e4m3_decode(c);
    if (std::isnan(v)) {
      EXPECT_EQ(e4m3_encode(v), c) << c;  // 0x7F and 0xFF keep their sign
      continue;
    }
    EXPECT_EQ(e4m3_encode(v), c) << c;
    if (c != 0x80) {
      EXPECT_TRUE(seen.insert(v).second) << c;
    }
  }
  EXPECT_EQ(seen.size(), 253u);  // 256 - two NaNs - the duplicate zero
}

// Brute force over all finite codes: nearest, ties to even mantissa, saturating at 448.
static unsigned e4m3_nearest(float x) {
  unsigned best = 0;
  double best_d = INFINITY;
  for (unsigned c = 0; c < 0x7F; ++c) {
    const double d = std::fabs(double(std::fabs(x)) - double(e4m3_decode(c)));
    if (d < best_d || (d == best_d && (c % 2) == 0)) best = c, best_d = d;
  }
  return best | (std::signbit(x) ? 0x80u : 0u);
}

TEST(E4M3, EncodeIsRoundToNearestEvenAndSaturates) {
  // Every code, every midpoint between neighbours, and points a little either side of them.
  for (unsigned c = 0; c + 1 < 0x7F; ++c) {
    const float lo = e4m3_decode(c), hi = e4m3_decode(c + 1);
    const float mid = 0.5f * (lo + hi);
    for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), hi}) {
      EXPECT_EQ(e4m3_encode(x), e4m3_nearest(x)) << x;
      EXPECT_EQ(e4m3_encode(-x), e4m3_nearest(-x)) << -x;
    }
  }
  EXPECT_EQ(e4m3_encode(460.0f), 0x7Eu);
  EXPECT_EQ(e4m3_encode(1e9f), 0x7Eu);
  EXPECT_EQ(e4m3_encode(-INFINITY), 0xFEu);
  EXPECT_EQ(e4m3_encode(std::ldexp(1.0f, -11)), 0x00u);  // below half the min subnormal
  EXPECT_EQ(e4m3_encode(std::ldexp(1.0f, -10)), 0x00u);  // exactly half: tie to even (0)
  EXPECT_EQ(e4m3_encode(std::ldexp(3.0f, -10)), 0x02u);  // 1.5 quanta: tie to even (2)
  EXPECT_EQ(e4m3_encode(std::ldexp(5.0f, -10)), 0x02u);  // 2.5 quanta: tie to even (2)
}

TEST(E4M3, ScaleDecodeIgnoresSign) {
  for (unsigned c = 0; c < 128; ++c) {
    if (c == 0x7F) continue;
    EXPECT_EQ(scale_decode(c | 0x80u), e4m3_decode(c)) << c;
  }
}

TEST(Exactness, ValueTimesScaleFitsFp16) {
  // docs/facts.md section 1: every E2M1 x E4M3 product is exact in fp16.
  for (unsigned v = 0; v < 16; ++v)
    for (unsigned s = 0; s < 0x7F; ++s) {
      const double p = double(e2m1_decode(v)) * double(e4m3_decode(s));
      EXPECT_EQ(fp16_bits_to_double(fp16_bits_from_double(p)), p) << v << " " << s;
    }
}

TEST(Packing, EvenIndexInLowNibble) {
  const uint8_t row[2] = {fp4_pack(0x3, 0xA), fp4_pack(0x7, 0x0)};
  EXPECT_EQ(row[0], 0xA3);
  EXPECT_EQ(fp4_at(row, 0), 0x3u);
  EXPECT_EQ(fp4_at(row, 1), 0xAu);
  EXPECT_EQ(fp4_at(row, 2), 0x7u);
  EXPECT_EQ(fp4_at(row, 3), 0x0u);
  for (unsigned lo = 0; lo < 16; ++lo)
    for (unsigned hi = 0; hi < 16; ++hi) {
      const uint8_t b = fp4_pack(lo, hi);
      EXPECT_EQ(fp4_at(&b, 0), lo);
      EXPECT_EQ(fp4_at(&b, 1), hi);
    }
}

TEST(Fp16, EveryFiniteValueRoundTrips) {
  for (unsigned h = 0; h < 65536; ++h) {
    const double v = fp16_bits_to_double(uint16_t(h));
    if (std::isnan(v)) continue;
    EXPECT_EQ(fp16_bits_from_double(v), h) << h;
  }
}

TEST(Fp16, RoundsOnceToNearestEven) {
  // Midpoints between neighbours go to the even one; a hair above goes up.
  for (unsigned h = 0; h < 0x7BFF; h += 7) {
    const double lo = fp16_bits_to_double(uint16_t(h)), hi = fp16_bits_to_double(uint16_t(h + 1));
    const double mid = 0.5 * (lo + hi);
    EXPECT_EQ(fp16_bits_from_double(mid), (h % 2 == 0) ? h : h + 1) << h;
    EXPECT_EQ(fp16_bits_from_double(std::nextafter(mid, 1e9)), h + 1) << h;
    EXPECT_EQ(fp16_bits_from_double(std::nextafter(mid, 0.0)), h) << h;
  }
  EXPECT_EQ(fp16_bits_from_double(65504.0), 0x7BFFu);
  EXPECT_EQ(fp16_bits_from_double(65519.99), 0x7BFFu);
  EXPECT_EQ(fp16_bits_from_double(65520.0), 0x7C00u);
  EXPECT_EQ(fp16_bits_from_double(-1e9), 0xFC00u);
  // Double rounding through float would get this wrong: 1 + 2^-11 + 2^-40 must go up.
  EXPECT_EQ(fp16_bits_from_double(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01u);
}

// Independent construction of the blocked layout: the GPU MODE 6-D view
// [32, 4, ceil(R/128), 4, ceil(Kb/4), L] in C order, filled as the reference's to_blocked does.
static std::vector<int> blocked_brute_force(int64_t rows, int64_t kb, int64_t l) {
  const int64_t rt = (rows + 127) / 128, ct = (kb + 3) / 4;
  std::vector<int> out(size_t(rt * 128 * ct * 4 * l), -1);
  // The blocked buffer, per batch, is the padded [Rp, Kp] matrix cut into 128x4 tiles (tile
  // order: row tiles outer, column tiles inner); each tile is rearranged from [4, 32, 4]
  // (row/32, row%32, col) to [32, 4, 4] (row%32, row/32, col) and flattened.
  for (int64_t b = 0; b < l; ++b)
    for (int64_t tr = 0; tr < rt; ++tr)
      for (int64_t tc = 0; tc < ct; ++tc)
        for (int64_t r32 = 0; r32 < 32; ++r32)
          for (int64_t r4 = 0; r4 < 4; ++r4)
            for (int64_t c4 = 0; c4 < 4; ++c4) {
              const int64_t r = tr * 128 + r4 * 32 + r32, c = tc * 4 + c4;
              const int64_t flat = b * rt * ct * 512 + (tr * ct + tc) * 512 + r32 * 16 + r4 * 4 + c4;
              out[size_t(flat)] = (r < rows && c < kb) ? int((b * rows + r) * kb + c) : -2;
            }
  return out;
}

TEST(ScaleLayout, BlockedOffsetsMatchBruteForce) {
  for (auto [rows, k, l] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {128, 64, 1}, {1, 16, 1}, {129, 80, 2}, {300, 16 * 13, 3}, {256, 16 * 8, 1}}) {
    const auto lay = ScaleLayout::make(rows, k, l);
    const auto brute = blocked_brute_force(rows, k / 16, l);
    ASSERT_EQ(int64_t(brute.size()), lay.blocked_bytes());
    std::vector<int> ours(brute.size(), -2);  // -2: padding
    std::set<int64_t> used;
    for (int64_t b = 0; b < l; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < lay.kblocks; ++c) {
          const int64_t off = lay.blocked_offset(r, c, b);
          ASSERT_LT(off, lay.blocked_bytes());
          ASSERT_TRUE(used.insert(off).second) << "offset used twice";
          ours[size_t(off)] = int(lay.linear_offset(r, c, b));
        }
    EXPECT_EQ(ours, brute) << rows << "x" << k << " L=" << l;
  }
}

TEST(ScaleLayout, SizesArePadded) {
  const auto lay = ScaleLayout::make(129, 16 * 5, 2);
  EXPECT_EQ(lay.rows_padded(), 256);
  EXPECT_EQ(lay.kblocks_padded(), 8);
  EXPECT_EQ(lay.blocked_bytes(), 2 * 256 * 8);
  EXPECT_EQ(lay.linear_bytes(), 2 * 129 * 5);
  EXPECT_EQ(lay.linear_offset(3, 2, 1), (1 * 129 + 3) * 5 + 2);
}
