// GPU MODE's nvfp4_gemm input tuple laid over the tool's own buffers (docs/python.md): which
// buffer each element views, in which shape and strides. Pure C++, no Python: the embedded
// interpreter (src/python/python_kernels.cpp) turns each view into a numpy array or a torch
// CUDA tensor, and tests/unit/contest_tuple_test.cpp checks the layout element by element.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// What an element holds: packed E2M1 pairs, E4M3 scale bytes, fp16 output.
enum class TupleKind { Fp4x2, E4M3, F16 };
const char* kind_name(TupleKind k);  // "fp4x2", "e4m3", "f16" (the helper's _KINDS keys)

struct TupleView {
  const void* p;
  std::vector<int64_t> shape, strides;  // strides in elements
  TupleKind kind;
};

// (a, b, sfa, sfb, sfa_permuted, sfb_permuted, c) over the tool's batch-outermost buffers: the
// contest's [R, K/2, L], [R, K/16, L], the 6-D permuted view of the blocked scales and [M, N, L].
// The scale strides are read off ScaleLayout, the one definition of both scale layouts.
std::array<TupleView, 7> contest_tuple(const Shape& s, const Operands& o);

}  // namespace nvfp4
