// Which GPUs the sm100 kernel's machine code runs on: one rule for the kernel's availability(),
// its tests and the first-run script's gate (docs/kernels.md, "Which GPUs run it").
// The kernel is built for the family-specific target sm_100f (CMake target nvfp4_sm100): its
// code runs on every GPU of that family - compute capability 10.0 (B200, GB200) and 10.3 (B300,
// GB300) - and on nothing else (not 11.x Thor, not 12.x RTX/DGX Spark, whose tensor cores have
// no tcgen05).
#pragma once

namespace nvfp4 {
namespace sm100 {

constexpr const char* kTargetArch = "sm_100f";
constexpr const char* kTargetGpus = "compute capability 10.0 or 10.3 (B200, GB200, B300, GB300)";

constexpr bool code_runs_on(int cc_major, int cc_minor) {
  return cc_major == 10 && (cc_minor == 0 || cc_minor == 3);
}

}  // namespace sm100
}  // namespace nvfp4
