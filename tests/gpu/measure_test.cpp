// Device timing in every mode on the naive kernel, the clock readers, graph-capture failure
// cleanup, the stream hold, the stream audit and the verdict's checks of the timed calls. Skips
// (loudly) without a GPU.
#include <gtest/gtest.h>

#include <chrono>

#include "src/case/run_case.hpp"
#include "src/measure/stream_audit.hpp"
#include "src/measure/stream_hold.hpp"
#include "tests/gpu_test.hpp"

using namespace nvfp4;

namespace nvfp4 {
void spin_every_sm(cudaStream_t stream, double us);  // spin.cu
}

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

// `iters` timed runs after one warm-up run, no warm-up time.
MeasureOptions few_runs(MeasureMode mode, int iters) {
  MeasureOptions o;
  o.mode = mode;
  o.iters = iters;
  o.warmup = 1;
  o.warmup_s = 0;
  return o;
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
    EXPECT_EQ(m.mode, mode);
    EXPECT_EQ(m.timer, "cuda-events");
    EXPECT_EQ(m.stop_reason, "fixed sample count");
    EXPECT_EQ(m.stats.count + m.clock.dropped_low_clock, m.attempts);
    EXPECT_GT(m.stats.median, 0);
    EXPECT_EQ(m.l2_flushed, mode != MeasureMode::Hot);
    if (uses_copies(mode)) {
      EXPECT_EQ(m.copies, 20);  // one per launch
      EXPECT_EQ(m.launches_per_sample, m.copies);
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
  EXPECT_THROW(measure_device(syncs, 20, 1 << 20, o, ctx.timer()), Error);
  // The capture was ended: ordinary timing on the same stream still works.
  const CaseResult r = run_mode(ctx, MeasureMode::Cold);
  EXPECT_EQ(r.disposition, Disposition::Passed) << r.message;
}

// The stream hold (src/measure/stream_hold.hpp): host time spent enqueueing is not in the GPU
// window, in every mode, and it is reported as the host time per call. Without the hold, hot
// mode's window would hold the 2 ms the host sleeps before enqueueing.
TEST(GpuMeasure, TheHeldStreamKeepsHostTimeOutOfTheWindow) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  DeviceBuffer buf(1 << 20);
  const DeviceWork slow_host = [&](cudaStream_t s, int) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2)) {
    }
    NVFP4_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, buf.bytes(), s));
  };
  for (MeasureMode mode : {MeasureMode::Cold, MeasureMode::Hot, MeasureMode::Rotate}) {
    SCOPED_TRACE(mode_name(mode));
    MeasureOptions o = few_runs(mode, 5);
    o.batch = 4;
    const Measurement m = measure_device(slow_host, operand_copies(mode, o.batch), 1 << 20, o, ctx.timer());
    EXPECT_TRUE(m.stream_held) << m.stream_hold_note;
    EXPECT_LT(m.stats.median, 500) << "the window holds the host's 2 ms per call";
    EXPECT_GE(m.host_call.median, 2000);
    EXPECT_EQ(m.host_call.count, m.stats.count);
    // 2 ms on the host for a memset of 1 MB: the held call's host time against its window
    // (measure.hpp, held_host_time_failure) names it.
    EXPECT_NE(m.isolation_failure.find("on the host per call while the stream was held"), std::string::npos)
        << m.isolation_failure;
  }
}

// A run() that waits on the host for device work would wait for the hold, which fills every SM,
// whether it waits for its own stream or for another: the hold times out, that run is taken
// again, and the timing goes on without the hold, saying so, so the windows hold the wait.
TEST(GpuMeasure, ARunThatWaitsOnTheHostIsTimedWithItsWait) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  StreamHold quick(0, 20'000'000);  // 20 ms: the test need not wait 100 ms a hold
  DeviceTimer timer = ctx.timer();
  timer.hold = &quick;
  MeasureOptions o = few_runs(MeasureMode::Hot, 3);
  Stream other;
  const DeviceWork own = [](cudaStream_t s, int) {
    spin_every_sm(s, 300);
    NVFP4_CUDA_CHECK(cudaStreamSynchronize(s));
  };
  const DeviceWork elsewhere = [&](cudaStream_t, int) {
    spin_every_sm(other.get(), 300);
    other.sync();
  };
  for (const DeviceWork* w : {&own, &elsewhere}) {
    const Measurement m = measure_device(*w, 1, 0, o, timer);
    EXPECT_FALSE(m.stream_held);
    EXPECT_EQ(m.holds_timed_out, 1);
    EXPECT_NE(m.stream_hold_note.find("waited on the host"), std::string::npos) << m.stream_hold_note;
    EXPECT_EQ(m.stats.count, 3);
    EXPECT_EQ(m.attempts, 3);  // the warm-up run timed out; the samples ran unheld
    EXPECT_GE(m.stats.median, 250) << "the 300 us the call waited for are in the window";
  }
}

// Every mode checks the timed outputs of the honest naive kernel, rechecks, and respects the
// floor; rotate and graph write one output slot per operand copy.
TEST(GpuMeasure, TheVerdictChecksAnHonestKernelInEveryMode) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  for (MeasureMode mode : {MeasureMode::Cold, MeasureMode::Hot, MeasureMode::Rotate, MeasureMode::Graph}) {
    SCOPED_TRACE(mode_name(mode));
    const CaseResult r = run_mode(ctx, mode);
    ASSERT_EQ(r.disposition, Disposition::Passed) << r.message;
    ASSERT_TRUE(r.verdict);
    EXPECT_EQ(r.verdict->timed.failure, "");
    EXPECT_EQ(r.verdict->timed.samples, 5);  // fewer than kVerifiedSamples: every one
    EXPECT_EQ(r.verdict->timed.slots > 1, uses_copies(mode));
    EXPECT_TRUE(r.verdict->isolation.done);
    EXPECT_EQ(r.verdict->isolation.failure, "");
    EXPECT_TRUE(r.verdict->recheck.result.passed());
    EXPECT_EQ(r.verdict->floor_failure, "");
  }
}

// --audit-streams (src/measure/stream_audit.hpp): work on another stream that the timed stream
// waits for inside the window passes; the same work left running past the window, or done before
// it opens, is named. The hold's checks see neither here: the side work is short and the hold
// is not delayed by it.
TEST(GpuMeasure, TheStreamAuditNamesWorkOutsideTheWindows) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  std::unique_ptr<StreamAudit> audit = StreamAudit::open();
  DeviceTimer timer = ctx.timer();
  timer.audit = audit.get();
  MeasureOptions o = few_runs(MeasureMode::Cold, 4);
  Stream side;
  Event forked, joined;
  const DeviceWork fork_join = [&](cudaStream_t s, int) {
    NVFP4_CUDA_CHECK(cudaEventRecord(forked.get(), s));
    NVFP4_CUDA_CHECK(cudaStreamWaitEvent(side.get(), forked.get()));
    spin_every_sm(side.get(), 20);
    NVFP4_CUDA_CHECK(cudaEventRecord(joined.get(), side.get()));
    NVFP4_CUDA_CHECK(cudaStreamWaitEvent(s, joined.get()));
  };
  const DeviceWork left_running = [&](cudaStream_t s, int) {
    NVFP4_CUDA_CHECK(cudaEventRecord(forked.get(), s));
    NVFP4_CUDA_CHECK(cudaStreamWaitEvent(side.get(), forked.get()));
    spin_every_sm(side.get(), 20);  // nobody waits for it
  };
  const Measurement honest = measure_device(fork_join, 1, 0, o, timer);
  EXPECT_TRUE(honest.audited);
  EXPECT_EQ(honest.isolation_failure, "");
  EXPECT_EQ(honest.audit_outside, 0);
  EXPECT_EQ(honest.audit_windows, 5);  // the warm-up and the 4 samples
  EXPECT_GE(honest.audit_records, 5 * 3);

  const Measurement cheat = measure_device(left_running, 1, 0, o, timer);
  EXPECT_TRUE(cheat.audited);
  EXPECT_EQ(cheat.audit_outside, 5);
  EXPECT_NE(cheat.isolation_failure.find("--audit-streams saw 5 operations on another stream"),
            std::string::npos) << cheat.isolation_failure;
  EXPECT_NE(cheat.isolation_failure.find("spin_kernel"), std::string::npos) << cheat.isolation_failure;

  // Without the audit the same timing records nothing of it.
  const Measurement plain = measure_device(fork_join, 1, 0, o, ctx.timer());
  EXPECT_FALSE(plain.audited);
}

// The case-level option: the honest naive kernel passes with the audit on, and the report's
// isolation says what it saw.
TEST(GpuMeasure, AnAuditedCasePasses) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  CaseSpec spec;
  spec.problem = {{128, 512, 1024, 1}, Dist::GpuMode, 11};
  spec.kernel = "naive";
  spec.reference = "cpu-exact";
  spec.measure.mode = MeasureMode::Rotate;
  spec.measure.warmup = 1;
  spec.measure.warmup_s = 0;
  spec.measure.iters = 3;
  spec.time_reference = false;
  spec.audit_streams = true;
  const CaseResult r = run_case(spec, ctx);
  ASSERT_EQ(r.disposition, Disposition::Passed) << r.message;
  ASSERT_TRUE(r.verdict);
  EXPECT_TRUE(r.verdict->isolation.audited);
  EXPECT_EQ(r.verdict->isolation.audit_windows, 4);
  EXPECT_EQ(r.verdict->isolation.audit_outside, 0);
}
