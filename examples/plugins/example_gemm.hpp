// One output element of C = A * B^T the plain way, for the example plugins and the deliberately
// broken test plugins (tests/broken_plugins/): integer block sums of doubled E2M1 values (exact),
// scaled in float, FP32 accumulation. Host and device.
#pragma once

#include "src/format/nvfp4.hpp"
#include "nvfp4bench/plugin.h"

namespace nvfp4_example {

// `blocked`: read the scales from the blocked layout instead of the linear one (same values).
NVFP4_HD float output_element(const nvfp4bench_problem& p, const nvfp4bench_operands& o, int64_t l,
                              int64_t i, int64_t j, bool blocked) {
  const int64_t kbs = p.k / nvfp4::kBlockSize;
  const auto la = nvfp4::ScaleLayout::make(p.m, p.k, p.l), lb = nvfp4::ScaleLayout::make(p.n, p.k, p.l);
  const uint8_t* ar = o.a + (l * p.m + i) * (p.k / 2);
  const uint8_t* br = o.b + (l * p.n + j) * (p.k / 2);
  float acc = 0.0f;
  for (int64_t kb = 0; kb < kbs; ++kb) {
    int32_t block = 0;
    for (int64_t kk = kb * nvfp4::kBlockSize; kk < (kb + 1) * nvfp4::kBlockSize; ++kk)
      block += nvfp4::e2m1_twice(nvfp4::fp4_at(ar, kk)) * nvfp4::e2m1_twice(nvfp4::fp4_at(br, kk));
    const uint8_t sa = blocked ? o.sfa_blocked[la.blocked_offset(i, kb, l)] : o.sfa[la.linear_offset(i, kb, l)];
    const uint8_t sb = blocked ? o.sfb_blocked[lb.blocked_offset(j, kb, l)] : o.sfb[lb.linear_offset(j, kb, l)];
    acc += 0.25f * float(block) * (nvfp4::scale_decode(sa) * nvfp4::scale_decode(sb));
  }
  return acc;
}

// Rows [0, rows) of every batch on the host.
inline void host_gemm(const nvfp4bench_problem& p, const nvfp4bench_operands& o, int64_t rows) {
  for (int64_t l = 0; l < p.l; ++l)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < p.n; ++j)
        o.c[(l * p.m + i) * p.n + j] = nvfp4::fp16_bits_from_double(output_element(p, o, l, i, j, false));
}

}  // namespace nvfp4_example
