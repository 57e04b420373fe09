// Planted bugs of the sm100 kernel's self-test: compile-time switches in the kernel's own source
// (kernel.cuh, descriptors.hpp), each one wrong line a reviewer could miss. The host execution
// compiles the kernel once per plant with NVFP4_SM100_PLANT=<number> (tests/sm100_host) and
// proves that the host models name each one (docs/kernels.md, "Planted bugs"). The CUDA build
// never defines it: every planted() below is a constant false there.
#pragma once

#ifndef NVFP4_SM100_PLANT
#define NVFP4_SM100_PLANT 0
#endif
#if NVFP4_SM100_PLANT != 0 && !defined(NVFP4_SM100_HOST_MODEL)
#error "NVFP4_SM100_PLANT is for the host execution of the kernel only"
#endif

// number, identifier, name (the test's name), what is wrong in the source
#define NVFP4_SM100_KERNEL_PLANTS(X)                                                              \
  X(1, SmemAlign128, "smem-align-128",                                                            \
    "the stages' shared-memory base aligned to 128 B, not to the 1024 B of the 128B swizzle atom") \
  X(2, SwizzleMode, "swizzle-mode",                                                               \
    "A's MMA descriptor uses swizzle mode 1 (128B with 32B atoms) instead of 2 (128B)")           \
  X(3, AliasedScaleColumns, "aliased-scale-columns",                                              \
    "every stage's scales copied to the same tensor-memory columns")                              \
  X(4, BarrierPhase, "barrier-phase",                                                             \
    "the producer waits on the empty barriers with the parity of the current phase")              \
  X(5, AccReleasedEarly, "acc-released-early",                                                    \
    "the epilogue releases the accumulator before it has read it")                                \
  X(6, NoMTailMask, "no-m-tail-mask", "the epilogue stores the rows past M of the last M tile")   \
  X(7, NoFenceAfterWait, "no-fence-after-wait",                                                   \
    "no tcgen05.fence::after_thread_sync between the full-barrier wait and tcgen05.cp/mma")       \
  X(8, NoSyncwarpBeforeLd, "no-syncwarp-before-ld",                                               \
    "no __syncwarp before the .sync.aligned tcgen05.ld")                                          \
  X(9, InstrDescFieldMoved, "instr-desc-field-moved",                                             \
    "the instruction descriptor's M field at bits 24-25 in both pack() and unpack()")             \
  X(10, NoFenceBeforeArrive, "no-fence-before-arrive",                                            \
    "no tcgen05.fence::before_thread_sync before the arrive that hands the accumulator on")       \
  X(11, KStepInRows, "k-step-in-rows",                                                            \
    "the MMA's K step advances the descriptor start by 128-byte rows instead of 32 bytes")

#include "src/format/nvfp4.hpp"  // NVFP4_HD

namespace nvfp4 {
namespace sm100 {

enum class KernelPlant : int {
  None = 0,
#define NVFP4_SM100_PLANT_ENUM(n, id, name, what) id = n,
  NVFP4_SM100_KERNEL_PLANTS(NVFP4_SM100_PLANT_ENUM)
#undef NVFP4_SM100_PLANT_ENUM
};
constexpr int kKernelPlants = 11;  // the highest number above

// True only in the host execution's build of this plant.
NVFP4_HD constexpr bool planted(KernelPlant p) { return static_cast<int>(p) == NVFP4_SM100_PLANT; }

}  // namespace sm100
}  // namespace nvfp4

// A planted descriptors.hpp differs from the real one in inline functions: its own inline
// namespace keeps the two apart at link time (the host model is built without a plant).
#define NVFP4_SM100_CAT2(a, b) a##b
#define NVFP4_SM100_CAT(a, b) NVFP4_SM100_CAT2(a, b)
#if NVFP4_SM100_PLANT != 0
#define NVFP4_SM100_PLANT_NS_BEGIN inline namespace NVFP4_SM100_CAT(planted_, NVFP4_SM100_PLANT) {
#define NVFP4_SM100_PLANT_NS_END }
#else
#define NVFP4_SM100_PLANT_NS_BEGIN
#define NVFP4_SM100_PLANT_NS_END
#endif
