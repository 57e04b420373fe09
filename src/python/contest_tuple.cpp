#include "src/python/contest_tuple.hpp"

#include "src/format/nvfp4.hpp"

namespace nvfp4 {

const char* kind_name(TupleKind k) {
  return k == TupleKind::Fp4x2 ? "fp4x2" : k == TupleKind::E4M3 ? "e4m3" : "f16";
}

std::array<TupleView, 7> contest_tuple(const Shape& s, const Operands& o) {
  const auto packed = [&](const uint8_t* p, int64_t r) {
    const int64_t kh = s.k / 2;
    return TupleView{p, {r, kh, s.l}, {kh, 1, r * kh}, TupleKind::Fp4x2};
  };
  const auto linear = [&](const uint8_t* p, int64_t r) {
    const ScaleLayout sl = ScaleLayout::make(r, s.k, s.l);
    const auto at = [&](int64_t i, int64_t j, int64_t b) { return sl.linear_offset(i, j, b); };
    return TupleView{p, {r, sl.kblocks, s.l}, {at(1, 0, 0), at(0, 1, 0), at(0, 0, 1)}, TupleKind::E4M3};
  };
  // Element [i%32, (i%128)/32, i/128, j%4, j/4, l] is the scale of row i, block j, batch l.
  const auto blocked = [&](const uint8_t* p, int64_t r) {
    const ScaleLayout sl = ScaleLayout::make(r, s.k, s.l);
    const auto at = [&](int64_t i, int64_t j, int64_t b) { return sl.blocked_offset(i, j, b); };
    return TupleView{p,
                      {32, kAtomRows / 32, sl.rows_padded() / kAtomRows, kAtomCols,
                       sl.kblocks_padded() / kAtomCols, s.l},
                      {at(1, 0, 0), at(32, 0, 0), at(kAtomRows, 0, 0), at(0, 1, 0),
                       at(0, kAtomCols, 0), at(0, 0, 1)},
                      TupleKind::E4M3};
  };
  return {packed(o.a, s.m), packed(o.b, s.n), linear(o.sfa, s.m), linear(o.sfb, s.n),
          blocked(o.sfa_blocked, s.m), blocked(o.sfb_blocked, s.n),
          TupleView{o.c, {s.m, s.n, s.l}, {s.n, 1, s.m * s.n}, TupleKind::F16}};
}

}  // namespace nvfp4
