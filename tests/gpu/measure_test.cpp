// Device timing in every mode on the naive kernel, the clock readers, and graph-capture failure
// cleanup. Skips (loudly) without a GPU.
#include <gtest/gtest.h>

#include "src/case/run_case.hpp"
#include "tests/gpu_test.hpp"

using namespace nvfp4;

namespace {

CaseResult run_mode(Context& ctx, MeasureMode mode) {
  CaseSpec spec;
  spec.problem = {{128, 512, 1024, 1}, Dist::GpuMode, 11};
  spec.kernel = "naive";
  spec.reference = "cpu-exact";
  spec.measure.mode = mode;
  spec.measure.warmup = 1;
  spec.measure.warmup_s = 0;
  spec.measure.iters = 5;
  spec.time_reference = false;
  return run_case(spec, ctx);
}

}  // namespace

TEST(GpuMeasure, EveryModeTimesAndVerifies) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  for (MeasureMode mode : {MeasureMode::Cold, MeasureMode::Hot, MeasureMode::Rotate, MeasureMode::Graph}) {
    SCOPED_TRACE(mode_name(mode));
    const CaseResult r = run_mode(ctx, mode);
    EXPECT_EQ(r.disposition, Disposition::Passed) << r.message;
    ASSERT_TRUE(r.kernel_timing);
    const Measurement& m = r.kernel_timing->measurement;
    EXPECT_EQ(m.mode, mode_name(mode));
    EXPECT_EQ(m.timer, "cuda-events");
    EXPECT_EQ(m.stop_reason, "fixed sample count");
    EXPECT_EQ(m.stats.count + m.clock.dropped_low_clock, m.attempts);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_EQ(m.l2_flushed, mode == MeasureMode::Cold);
    if (uses_copies(mode)) {
      EXPECT_GE(m.rotation_bytes, 3 * int64_t(ctx.dev.l2_bytes));
      EXPECT_GT(m.copies, 1);
      EXPECT_EQ(m.launches_per_sample % m.copies, 0);
    } else {
      EXPECT_EQ(m.copies, 1);
      EXPECT_EQ(m.launches_per_sample, 1);
    }
    EXPECT_NE(m.clock.source, "none");
    EXPECT_GT(m.clock.read, 0);
    EXPECT_GT(m.clock.median_mhz, 100);
    EXPECT_LT(m.clock.median_mhz, 5000);
  }
}

TEST(GpuMeasure, ProbeKernelEstimatesAPlausibleClock) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  ProbeKernelClock probe;
  const auto mhz = probe.read_mhz(ctx.stream->get());
  ASSERT_TRUE(mhz);
  EXPECT_GT(*mhz, 100);
  EXPECT_LT(*mhz, 1.5 * ctx.dev.clock_khz / 1000.0 + 100);
}

TEST(GpuMeasure, UncapturableWorkFailsCleanlyAndTheStreamStaysUsable) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  MeasureOptions o;
  o.mode = MeasureMode::Graph;
  o.iters = 2;
  const DeviceWork syncs = [](cudaStream_t s, int) { NVFP4_CUDA_CHECK(cudaStreamSynchronize(s)); };
  EXPECT_THROW(measure_device(syncs, 2, 1 << 20, o, ctx.timer()), Error);
  // The capture was ended: ordinary timing on the same stream still works.
  const CaseResult r = run_mode(ctx, MeasureMode::Cold);
  EXPECT_EQ(r.disposition, Disposition::Passed) << r.message;
}
