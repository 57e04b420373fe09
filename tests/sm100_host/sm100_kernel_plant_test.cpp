// Bugs planted in the kernel's own source (kernels/sm100/plant.hpp: compile-time switches in
// kernel.cuh and descriptors.hpp, one build of the device code each): the host execution must
// catch every one with the finding that names the rule it breaks - the PTX ISA rules of the
// host models (1024-byte swizzle atoms, tcgen05 fences, .sync.aligned convergence,
// instruction-descriptor fields) and the launch's own (bounds of global memory, hangs).
#include <gtest/gtest.h>

#include <string>

#include "kernels/sm100/plant.hpp"
#include "tests/sm100_host/host_exec.hpp"

using namespace nvfp4;
using sm100::KernelPlant;
using sm100_host::Outcome;
using sm100_host::Spec;

namespace {

struct Expect {
  KernelPlant plant;
  const char* finding;       // text of the finding that must be made
  int min_mma_us = 0;        // slow tensor cores make a race visible
  int64_t m = 128, k = 2048;  // 512: units shorter than the ring; m 200: an M tail
  int smem_offset = -1;      // dynamic shared memory start in the window (-1: random)
};

const Expect kExpect[] = {
    // 128 bytes past a 1024-byte boundary: aligning to 128 keeps it there.
    {KernelPlant::SmemAlign128, "must start on a 1024-byte boundary", 0, 128, 2048, 128},
    {KernelPlant::SwizzleMode, "which TMA wrote with 128-byte swizzle"},
    {KernelPlant::AliasedScaleColumns, "that a queued tcgen05.mma still uses", 300},
    {KernelPlant::BarrierPhase, "hang: every thread waits"},
    {KernelPlant::AccReleasedEarly, "while a queued tcgen05.mma writes them", 300, 128, 512},
    {KernelPlant::NoMTailMask, "out-of-bounds global store", 0, 200},
    {KernelPlant::NoFenceAfterWait, "with no tcgen05.fence::after_thread_sync"},
    {KernelPlant::NoSyncwarpBeforeLd, "issues .sync.aligned tcgen05.ld.32x32b.x32 unconverged"},
    {KernelPlant::InstrDescFieldMoved, "instruction descriptor 0x"},
    {KernelPlant::NoFenceBeforeArrive, "with no tcgen05.fence::before_thread_sync"},
    {KernelPlant::KStepInRows, "lies in row 1 of its 128B swizzle atom"},
};

const char* plant_name(KernelPlant p) {
#define NVFP4_NAME(n, id, name, what) \
  if (p == KernelPlant::id) return name;
  NVFP4_SM100_KERNEL_PLANTS(NVFP4_NAME)
#undef NVFP4_NAME
  return "none";
}

// One CTA, three (M tail: six) work units of 8 (or 2) K tiles: the ring wraps and both
// accumulators are reused.
Spec plant_spec(const Expect& e) {
  Spec spec;
  spec.shape = {e.m, 384, e.k, 1};
  spec.sm_count = 1;
  spec.model.seed = 5;
  spec.model.min_mma_delay_us = e.min_mma_us;
  spec.model.smem_window_offset = e.smem_offset;
  spec.kernel_plant = static_cast<int>(e.plant);
  return spec;
}

class Sm100KernelPlant : public ::testing::TestWithParam<Expect> {};

TEST_P(Sm100KernelPlant, IsCaughtByItsFinding) {
  const Expect& e = GetParam();
  const Outcome out = sm100_host::run(plant_spec(e));
  EXPECT_FALSE(out.passed()) << "planted " << plant_name(e.plant) << " went unnoticed";
  bool found = false;
  for (const auto& f : out.model.findings) found |= f.find(e.finding) != std::string::npos;
  EXPECT_TRUE(found) << "planted " << plant_name(e.plant) << ": expected a finding with '"
                     << e.finding << "': " << out.summary();
}

INSTANTIATE_TEST_SUITE_P(Bugs, Sm100KernelPlant, ::testing::ValuesIn(kExpect),
                         [](const auto& info) {
                           std::string n = plant_name(info.param.plant);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// Every plant of the kernel source has an expectation above, and the unplanted kernel on the
// same set-ups (with an M tail, a misaligned window, slow tensor cores) makes no finding.
TEST(Sm100KernelPlant, EveryPlantIsTestedAndTheControlsPass) {
  for (int p = 1; p <= sm100::kKernelPlants; ++p) {
    bool found = false;
    for (const auto& e : kExpect) found |= static_cast<int>(e.plant) == p;
    EXPECT_TRUE(found) << "kernel plant " << p << " has no test";
  }
  for (const Expect& e : kExpect) {
    Expect control = e;
    control.plant = KernelPlant::None;
    const Outcome out = sm100_host::run(plant_spec(control));
    EXPECT_TRUE(out.passed()) << "control of " << plant_name(e.plant) << ": " << out.summary();
  }
}

}  // namespace
