#include "src/verify/verify.hpp"

#include <cmath>

#include "src/format/nvfp4.hpp"
#include "src/problem/generate.hpp"

namespace nvfp4 {

bool element_matches(double got, double exp, const Tolerance& tol) {
  if (std::isnan(got) || std::isnan(exp)) return std::isnan(got) && std::isnan(exp);
  if (std::isinf(got) || std::isinf(exp)) return got == exp;
  return std::fabs(got - exp) <= tol.atol + tol.rtol * std::fabs(exp);
}

void Verifier::check(const Coord& at, uint16_t got_bits, uint16_t exp_bits) {
  ++r_.checked;
  const double got = fp16_bits_to_double(got_bits), exp = fp16_bits_to_double(exp_bits);
  const bool unwritten = got_bits == kPoisonFp16;
  if (std::isfinite(got) && std::isfinite(exp)) {
    const double abs_err = std::fabs(got - exp);
    if (abs_err > r_.max_abs_err) r_.max_abs_err = abs_err;
    if (exp != 0.0 && abs_err / std::fabs(exp) > r_.max_rel_err) r_.max_rel_err = abs_err / std::fabs(exp);
  }
  if (!unwritten && element_matches(got, exp, tol_)) return;
  ++r_.mismatches;
  if (unwritten) ++r_.unwritten;
  if (r_.first.size() < keep_) r_.first.push_back({at, got, exp, unwritten});
}

VerifyResult verify_full(const Shape& s, const uint16_t* got, const uint16_t* expected,
                         const Tolerance& tol) {
  Verifier v(tol, "full");
  for (int64_t b = 0; b < s.l; ++b)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t idx = (b * s.m + i) * s.n + j;
        v.check({b, i, j}, got[idx], expected[idx]);
      }
  return v.result();
}

std::vector<Coord> sample_coords(const Shape& s, int64_t count, uint64_t seed) {
  std::vector<Coord> out;
  out.reserve(size_t(count));
  const uint64_t total = uint64_t(s.l) * uint64_t(s.m) * uint64_t(s.n);
  for (int64_t t = 0; t < count; ++t) {
    // The corners first (edge tiles are where kernels go wrong), then uniform draws.
    uint64_t idx;
    if (t == 0) idx = 0;
    else if (t == 1) idx = total - 1;
    else idx = mix64(seed ^ mix64(uint64_t(t))) % total;
    out.push_back({int64_t(idx / uint64_t(s.m * s.n)), int64_t(idx / uint64_t(s.n) % uint64_t(s.m)),
                   int64_t(idx % uint64_t(s.n))});
  }
  return out;
}

}  // namespace nvfp4
