// The `host` kernel's arithmetic: A and B dequantized to float (value * scale, exact), then an
// FP32 GEMM written for the CPU: cache-blocked dot products over 16-lane vectors, one code path
// compiled per instruction set (AVX-512, AVX2+FMA, generic) and picked by the CPU at run time.
// Every variant sums in the same order (lane k mod 16 within a K block of kKBlock, the lanes by
// a fixed tree, the blocks in K order), so all give bit-identical C: only the register tiling
// differs. Products of dequantized values are exact in float, so FMA contraction or not gives
// the same result too. Independent of the exact reference (kernels/reference/cpu_exact.cpp),
// which sums integer block sums in double: verifying one against the other is a real check.
#pragma once

#include <string>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4::host {

enum class Isa { Generic, Avx2, Avx512 };

constexpr int64_t kKBlock = 1024;  // K elements per block (a multiple of 16)

const char* isa_name(Isa isa);         // "avx512", "avx2", "generic"
std::vector<Isa> isas_here();          // what this CPU can run, fastest first
bool parse_isa(const std::string& name, Isa& out);

// C = A * B^T for every batch of `ops` (host pointers, the tool's layouts), on all host threads.
void gemm(const Shape& s, const Operands& ops, Isa isa);

}  // namespace nvfp4::host
