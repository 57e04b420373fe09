// GPU MODE's input tuple over the tool's buffers (src/python/contest_tuple.hpp): every element
// viewed through the tuple's shape and strides lands on the byte the tool's layout puts it at,
// written out here from the layouts' definitions (src/gemm/gemm.hpp, src/format/nvfp4.hpp)
// rather than read back from ScaleLayout.
#include <gtest/gtest.h>

#include <string>

#include "src/python/contest_tuple.hpp"

using namespace nvfp4;

namespace {

int64_t offset_of(const TupleView& v, const std::vector<int64_t>& idx) {
  EXPECT_EQ(idx.size(), v.shape.size());
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    EXPECT_LT(idx[d], v.shape[d]) << "dimension " << d;
    off += idx[d] * v.strides[d];
  }
  return off;
}

int64_t elements(const TupleView& v) {
  int64_t n = 1;
  for (int64_t e : v.shape) n *= e;
  return n;
}

// The 128x4-atom blocked layout: 512-byte atoms, row r at (r%32)*16 + ((r%128)/32)*4.
int64_t blocked_byte(int64_t r, int64_t c, int64_t b, int64_t rows, int64_t kblocks) {
  const int64_t rp = (rows + 127) / 128 * 128, kp = (kblocks + 3) / 4 * 4;
  return b * rp * kp + ((r / 128) * (kp / 4) + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 +
         c % 4;
}

}  // namespace

TEST(ContestTuple, EveryElementLandsWhereTheToolsLayoutPutsIt) {
  // Ragged on purpose: rows not a multiple of 128, K/16 not a multiple of 4, two batches.
  const Shape s{200, 136, 96, 2};
  const int64_t kh = s.k / 2, kb = s.k / 16;
  uint8_t a, b, sfa, sfb, sfa_blocked, sfb_blocked;
  uint16_t c;
  const Operands o{&a, &b, &sfa, &sfb, &sfa_blocked, &sfb_blocked, &c};
  const auto t = contest_tuple(s, o);

  const void* want_p[] = {&a, &b, &sfa, &sfb, &sfa_blocked, &sfb_blocked, &c};
  const TupleKind want_kind[] = {TupleKind::Fp4x2, TupleKind::Fp4x2, TupleKind::E4M3, TupleKind::E4M3,
                                 TupleKind::E4M3,  TupleKind::E4M3,  TupleKind::F16};
  for (int e = 0; e < 7; ++e) {
    EXPECT_EQ(t[e].p, want_p[e]) << e;
    EXPECT_EQ(t[e].kind, want_kind[e]) << e;
  }
  EXPECT_STREQ(kind_name(TupleKind::Fp4x2), "fp4x2");
  EXPECT_STREQ(kind_name(TupleKind::E4M3), "e4m3");
  EXPECT_STREQ(kind_name(TupleKind::F16), "f16");

  for (int which = 0; which < 2; ++which) {
    const int64_t rows = which == 0 ? s.m : s.n;
    SCOPED_TRACE(which == 0 ? "a/sfa" : "b/sfb");
    const TupleView& packed = t[size_t(which)];
    const TupleView& linear = t[size_t(2 + which)];
    const TupleView& blocked = t[size_t(4 + which)];
    EXPECT_EQ(packed.shape, (std::vector<int64_t>{rows, kh, s.l}));
    EXPECT_EQ(linear.shape, (std::vector<int64_t>{rows, kb, s.l}));
    const int64_t rp = (rows + 127) / 128 * 128, kp = (kb + 3) / 4 * 4;
    EXPECT_EQ(blocked.shape, (std::vector<int64_t>{32, 4, rp / 128, 4, kp / 4, s.l}));
    EXPECT_EQ(elements(blocked), rp * kp * s.l);  // the padding is part of the view
    for (int64_t l = 0; l < s.l; ++l)
      for (int64_t r = 0; r < rp; ++r) {
        if (r < rows) {
          for (int64_t k = 0; k < kh; ++k)
            ASSERT_EQ(offset_of(packed, {r, k, l}), (l * rows + r) * kh + k) << r << " " << k;
          for (int64_t j = 0; j < kb; ++j)
            ASSERT_EQ(offset_of(linear, {r, j, l}), (l * rows + r) * kb + j) << r << " " << j;
        }
        for (int64_t j = 0; j < kp; ++j)
          ASSERT_EQ(offset_of(blocked, {r % 32, (r % 128) / 32, r / 128, j % 4, j / 4, l}),
                    blocked_byte(r, j, l, rows, kb))
              << r << " " << j;
      }
  }
  const TupleView& cv = t[6];
  EXPECT_EQ(cv.shape, (std::vector<int64_t>{s.m, s.n, s.l}));
  for (int64_t l = 0; l < s.l; ++l)
    for (int64_t i = 0; i < s.m; i += 7)
      for (int64_t j = 0; j < s.n; j += 5) ASSERT_EQ(offset_of(cv, {i, j, l}), (l * s.m + i) * s.n + j);
}
