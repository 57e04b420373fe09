// The size of one GEMM problem, apart from the Gemm interface so that pure host code (a kernel's
// heuristics, compiled without CUDA headers) can name it.
#pragma once

#include <cstdint>

namespace nvfp4 {

struct Shape {
  int64_t m = 0, n = 0, k = 0, l = 1;
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(l); }
};

}  // namespace nvfp4
