// The sm100 bisect: structured problems whose outputs separate the three hardware behaviours no
// CPU check can settle and the epilogue (docs/kernels.md, "The bisect"):
//   (a) the K step inside the 128-byte swizzle atom (the MMA descriptor's start moved 32 bytes)
//   (b) the lane mapping of tcgen05.cp 32x128b.warpx4 (scale atoms into tensor memory)
//   (c) where scale_vec::4X / block16 reads the scales in tensor memory (row, K block)
//   (d) the epilogue: tensor memory -> registers -> C
// probes() writes the operands directly (one 128x128x256 tile: one K tile, four MMAs);
// decode() takes the C of each probe, as the kernel wrote it, and names what differs and how.
// The same probes and decoder run on a Blackwell GPU (bench/sm100_bisect.cpp) and on the host
// models with each behaviour deliberately changed (tests/sm100_host/sm100_bisect_test.cpp).
// Host C++ only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/gemm/shape.hpp"
#include "src/problem/problem.hpp"

namespace nvfp4 {
namespace sm100 {
namespace bisect {

enum class Behaviour { KStep, ScaleCopy, ScalePlacement, Epilogue };
const char* behaviour_name(Behaviour b);  // "(a) K step inside the 128-byte swizzle atom", ...

// Every probe is one output tile: M = N = 128 (one MMA each way), K = 256 (one K tile).
constexpr Shape kShape{128, 128, 256, 1};

struct Probe {
  std::string name;  // e.g. "kstep-A"
  std::string what;  // the operands in words
  HostTensors tensors;  // of kShape; C poisoned
};
std::vector<Probe> probes();

struct Finding {
  Behaviour behaviour;
  std::string how;  // what the outputs show, in words
};

struct Report {
  std::vector<Finding> differs;    // in bisect order: (d), (b), (a), (c)
  std::vector<std::string> lines;  // one per behaviour: ok / DIFFERS / not judged, and why
  bool differs_in(Behaviour b) const;
  std::string text() const;  // the lines, then the verdict
};

// outputs[i]: the C (fp16 bits, kShape) the kernel wrote for probes()[i]. Throws
// std::invalid_argument when the count or a size is wrong.
Report decode(const std::vector<std::vector<uint16_t>>& outputs);

}  // namespace bisect
}  // namespace sm100
}  // namespace nvfp4
