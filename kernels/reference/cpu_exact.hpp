// The exact CPU reference (docs/facts.md section 1): per 16-element block the integer sum of
// (2a)(2b), times sa*sb, accumulated in double over the blocks in K order and rounded once to
// fp16. The full and the per-element paths produce bit-identical results.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// The exact value of C[batch, i, j] in double, before rounding (host operands).
double exact_element(const Shape& s, const Operands& host, int64_t batch, int64_t i, int64_t j);

// The same, rounded once to fp16 bits.
uint16_t exact_element_fp16(const Shape& s, const Operands& host, int64_t batch, int64_t i,
                            int64_t j);

// exact_element_fp16 at each flat [L, M, N] index of `idx`, in parallel.
std::vector<uint16_t> exact_at(const Shape& s, const Operands& host, const std::vector<int64_t>& idx);

// All of C (host operands, host output), multithreaded and vectorized.
void exact_gemm(const Shape& s, const Operands& host);

std::unique_ptr<Gemm> make_cpu_exact_reference();

}  // namespace nvfp4
