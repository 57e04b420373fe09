// Verification (docs/facts.md section 2): an element fails when |got - exp| > atol + rtol*|exp|,
// or when their NaN / +Inf / -Inf status differs. Outputs still holding the poison pattern were
// never written: they fail and are counted apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-3;
};

struct Coord {
  int64_t batch = 0, i = 0, j = 0;
  bool operator==(const Coord& o) const { return batch == o.batch && i == o.i && j == o.j; }
};

struct Mismatch {
  Coord at;
  double got = 0, expected = 0;
  bool unwritten = false;
};

struct VerifyResult {
  std::string mode;  // "full" or "sampled"
  int64_t checked = 0;
  int64_t mismatches = 0;  // includes the unwritten ones
  int64_t unwritten = 0;
  double max_abs_err = 0, max_rel_err = 0;  // over finite pairs
  std::vector<Mismatch> first;              // the first few, in memory order
  bool passed() const { return checked > 0 && mismatches == 0; }
};

bool element_matches(double got, double expected, const Tolerance& tol);

// Accumulates comparisons; used by both full and sampled checks.
class Verifier {
 public:
  Verifier(Tolerance tol, std::string mode, size_t keep = 8) : tol_(tol), keep_(keep) {
    r_.mode = std::move(mode);
  }
  void check(const Coord& at, uint16_t got_bits, uint16_t expected_bits);
  const VerifyResult& result() const { return r_; }

 private:
  Tolerance tol_;
  size_t keep_;
  VerifyResult r_;
};

// Every element of two [L, M, N] fp16 buffers.
VerifyResult verify_full(const Shape& s, const uint16_t* got, const uint16_t* expected,
                         const Tolerance& tol);

// `count` distinct-enough coordinates drawn from `seed` (deterministic, uniform over C).
std::vector<Coord> sample_coords(const Shape& s, int64_t count, uint64_t seed);

}  // namespace nvfp4
