// Integer rounding the tool's sizes and counts share: one definition each.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvfp4 {

// ceil(a / b) for a >= 0, b > 0.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// x rounded up to a multiple of a (a > 0).
constexpr size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

}  // namespace nvfp4
