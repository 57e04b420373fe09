// The exact CPU reference against an independent brute force, and its two paths against each other.
#include <gtest/gtest.h>

#include "src/problem/problem.hpp"
#include "kernels/reference/cpu_exact.hpp"

using namespace nvfp4;

// Independent: decode each value and scale to double, multiply, sum in long double.
static double brute(const Shape& s, const HostTensors& t, int64_t b, int64_t i, int64_t j) {
  long double acc = 0;
  const int64_t kbs = s.k / 16;
  for (int64_t k = 0; k < s.k; ++k) {
    const double av = e2m1_decode(fp4_at(t.a.data() + (b * s.m + i) * s.k / 2, k));
    const double bv = e2m1_decode(fp4_at(t.b.data() + (b * s.n + j) * s.k / 2, k));
    const double sa = scale_decode(t.sfa[(b * s.m + i) * kbs + k / 16]);
    const double sb = scale_decode(t.sfb[(b * s.n + j) * kbs + k / 16]);
    acc += (long double)(av * sa) * (long double)(bv * sb);
  }
  return double(acc);
}

class CpuExact : public ::testing::TestWithParam<std::tuple<Shape, Dist>> {};

TEST_P(CpuExact, FullMatchesPerElementAndBruteForce) {
  const auto [shape, dist] = GetParam();
  HostTensors t;
  t.allocate(shape);
  generate_host({shape, dist, 42}, t);
  Operands ops = t.view();
  exact_gemm(shape, ops);
  int64_t checked = 0;
  for (int64_t b = 0; b < shape.l; ++b)
    for (int64_t i = 0; i < shape.m; ++i)
      for (int64_t j = 0; j < shape.n; ++j) {
        const uint16_t full = t.c[size_t((b * shape.m + i) * shape.n + j)];
        ASSERT_EQ(full, exact_element_fp16(shape, ops, b, i, j)) << b << " " << i << " " << j;
        ASSERT_EQ(full, fp16_bits_from_double(brute(shape, t, b, i, j))) << b << " " << i << " " << j;
        ++checked;
      }
  EXPECT_EQ(checked, shape.l * shape.m * shape.n);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuExact,
    ::testing::Values(std::make_tuple(Shape{5, 7, 16, 1}, Dist::GpuMode),
                      std::make_tuple(Shape{33, 19, 256, 2}, Dist::GpuMode),
                      std::make_tuple(Shape{17, 40, 512, 3}, Dist::Normal),
                      std::make_tuple(Shape{64, 48, 1024, 1}, Dist::Normal)));

TEST(CpuExactKnownAnswer, HandBuiltBlocks) {
  // A row of 1.0 (code 2) with scale 2, B row of -0.5 (code 9) with scale 3, K = 32:
  // C = 32 * (1*2) * (-0.5*3) = -96.
  const Shape s{1, 1, 32, 1};
  HostTensors t;
  t.allocate(s);
  std::fill(t.a.begin(), t.a.end(), fp4_pack(2, 2));
  std::fill(t.b.begin(), t.b.end(), fp4_pack(9, 9));
  std::fill(t.sfa.begin(), t.sfa.end(), uint8_t(e4m3_encode(2.0f)));
  std::fill(t.sfb.begin(), t.sfb.end(), uint8_t(e4m3_encode(3.0f)));
  EXPECT_EQ(exact_element(s, t.view(), 0, 0, 0), -96.0);
  Operands ops = t.view();
  exact_gemm(s, ops);
  EXPECT_EQ(fp16_bits_to_double(t.c[0]), -96.0);
}
