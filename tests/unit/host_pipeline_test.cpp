// The host backend end to end: the host kernel verified against the exact reference, and a
// corrupted kernel caught - so the check can fail.
#include <gtest/gtest.h>

#include "src/case/run_case.hpp"
#include "src/report/json_writer.hpp"
#include "kernels/host/host_sgemm.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "src/registry/registry.hpp"

using namespace nvfp4;

TEST(HostPipeline, HostKernelMatchesExactReference) {
  for (Dist d : {Dist::GpuMode, Dist::Normal}) {
    const Shape s{37, 29, 512, 2};
    HostTensors t;
    t.allocate(s);
    generate_host({s, d, 3}, t);
    std::vector<uint16_t> got(size_t(s.l * s.m * s.n), kPoisonFp16);
    Operands ops = t.view();
    ops.c = got.data();
    auto k = make_gemm("host", Role::Kernel);
    ASSERT_TRUE(k);
    k->run(s, ops, nullptr, nullptr);
    Operands rops = t.view();
    exact_gemm(s, rops);
    const auto v = verify_full(s, got.data(), t.c.data(), {});
    EXPECT_TRUE(v.passed()) << v.mismatches;
    EXPECT_EQ(v.checked, s.l * s.m * s.n);
  }
}

namespace {
// A context without a GPU (the host backend) and a case timed once without warm-up.
Context host_context() {
  Context ctx;
  ctx.dev.has_gpu = false;
  return ctx;
}
CaseSpec one_run(const Problem& p) {
  CaseSpec spec;
  spec.problem = p;
  spec.measure.warmup = 0;
  spec.measure.iters = 1;
  return spec;
}
}  // namespace

TEST(HostPipeline, RunCaseOnHostBackendPassesAndSamples) {
  Context ctx = host_context();
  CaseSpec spec = one_run({{64, 80, 256, 2}, Dist::Normal, 9});
  CaseResult r = run_case(spec, ctx);
  EXPECT_EQ(r.kernel, "host");
  EXPECT_EQ(r.reference, "cpu-exact");
  EXPECT_EQ(r.disposition, Disposition::Passed) << r.message;
  ASSERT_TRUE(r.verification);
  EXPECT_EQ(r.verification->mode, "full");
  EXPECT_EQ(r.verification->checked, 2 * 64 * 80);
  spec.verify_sample = 500;
  r = run_case(spec, ctx);
  EXPECT_EQ(r.verification->mode, "sampled");
  EXPECT_EQ(r.verification->checked, 500);
  EXPECT_EQ(r.disposition, Disposition::Passed);
}

namespace {
// A kernel that is wrong in one element and never writes another.
class BrokenHostKernel final : public Gemm {
 public:
  std::string name() const override { return "broken"; }
  std::string description() const override { return "test only"; }
  Space space() const override { return Space::Host; }
  Availability availability(const DeviceInfo&) const override { return {true, {}}; }
  void run(const Shape& s, const Operands& ops, void*, cudaStream_t) override {
    exact_gemm(s, ops);
    ops.c[3] = fp16_bits_from_double(fp16_bits_to_double(ops.c[3]) + 1.0);
    ops.c[5] = kPoisonFp16;
  }
};
}  // namespace

TEST(HostPipeline, VerificationCatchesAWrongAndAnUnwrittenElement) {
  const Shape s{8, 8, 64, 1};
  HostTensors t;
  t.allocate(s);
  generate_host({s, Dist::GpuMode, 1}, t);
  std::vector<uint16_t> got(64);
  Operands ops = t.view();
  ops.c = got.data();
  BrokenHostKernel().run(s, ops, nullptr, nullptr);
  Operands rops = t.view();
  exact_gemm(s, rops);
  const auto v = verify_full(s, got.data(), t.c.data(), {});
  EXPECT_EQ(v.mismatches, 2);
  EXPECT_EQ(v.unwritten, 1);
}

TEST(HostPipeline, UnknownKernelIsAUsageErrorListingNames) {
  Context ctx;
  CaseSpec spec;
  spec.problem = {{8, 8, 64, 1}, Dist::GpuMode, 1};
  spec.kernel = "nope";
  try {
    run_case(spec, ctx);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("--kernel 'nope': unknown kernel; expected one of: auto, naive, host"), std::string::npos) << e.what();
  }
}

TEST(SpeedOfLight, FilledForAKnownGpuAndAbsentWithoutOne) {
  CaseResult r;
  r.problem.shape = {128, 7168, 16384, 1};
  TimingResult t;
  t.ran = true;
  t.measurement.stats.median = 100.0;  // us
  r.kernel_timing = t;
  DeviceInfo dev;
  apply_speed_of_light(r, dev);  // no GPU: nothing
  EXPECT_FALSE(r.speed_of_light);
  dev.has_gpu = true;
  dev.name = "NVIDIA H200";
  dev.cc_major = 9;
  apply_speed_of_light(r, dev);
  ASSERT_TRUE(r.speed_of_light);
  ASSERT_TRUE(r.speed_of_light->known);
  // H200 has no FP4 tensor cores: the FP16 rate bounds this problem (compute bound).
  EXPECT_STREQ(r.speed_of_light->bound(), "compute");
  ASSERT_TRUE(r.kernel_timing->sol_fraction);
  EXPECT_NEAR(*r.kernel_timing->sol_fraction, r.speed_of_light->sol_s * 1e6 / 100.0, 1e-12);
  const auto j = to_json(r, false);
  EXPECT_EQ(j["speed_of_light"]["bound"], "compute");
  EXPECT_GT(j["speed_of_light"]["sol_us"].get<double>(), 20.0);
  dev.name = "Mystery GPU";
  dev.cc_major = 7;
  apply_speed_of_light(r, dev);
  EXPECT_FALSE(r.speed_of_light->known);
  EXPECT_EQ(to_json(r, false)["speed_of_light"]["known"], false);
}

// A kernel that chooses per shape reports its choice (`kernel.configuration`); one without a
// choice leaves the key out.
TEST(HostPipeline, ReportCarriesTheKernelsConfigurationOnlyWhenItHasOne) {
  Context ctx = host_context();
  CaseResult r = run_case(one_run({{16, 16, 64, 1}, Dist::Normal, 1}), ctx);
  // The host kernel's configuration is the instruction set it ran (kernels/host/host_sgemm.hpp).
  EXPECT_EQ(r.kernel_configuration, host::isa_name(host::isas_here().front()));
  EXPECT_EQ(to_json(r, false)["kernel"]["configuration"], r.kernel_configuration);
  r.kernel_configuration = "";
  EXPECT_FALSE(to_json(r, false)["kernel"].contains("configuration"));
  r.kernel_configuration = "two-phase 128x144 split 1 group 16";
  EXPECT_EQ(to_json(r, false)["kernel"]["configuration"], "two-phase 128x144 split 1 group 16");
}
