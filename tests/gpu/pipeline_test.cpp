// GPU: operand generation is bit-identical to the host twin, and the naive kernel matches the
// exact reference on the GPU MODE test shapes (L = 1 and 3) and on ragged shapes.
#include <gtest/gtest.h>

#include "src/case/run_case.hpp"
#include "tests/gpu_test.hpp"

using namespace nvfp4;

TEST(GpuGenerate, BitIdenticalToHost) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  for (Dist d : {Dist::GpuMode, Dist::Normal})
    for (Shape s : {Shape{128, 256, 256, 1}, Shape{130, 70, 96, 3}, Shape{1, 1, 16, 1}}) {
      const Problem p{s, d, 1234};
      DeviceTensors dt;
      dt.allocate(s);
      generate_device(p, dt, ctx.stream->get());
      ctx.stream->sync();
      HostTensors from_dev, host;
      from_dev.allocate(s);
      host.allocate(s);
      copy_inputs_to_host(dt, from_dev);
      generate_host(p, host);
      EXPECT_EQ(from_dev.a, host.a);
      EXPECT_EQ(from_dev.b, host.b);
      EXPECT_EQ(from_dev.sfa, host.sfa);
      EXPECT_EQ(from_dev.sfb, host.sfb);
      EXPECT_EQ(from_dev.sfa_blocked, host.sfa_blocked);
      EXPECT_EQ(from_dev.sfb_blocked, host.sfb_blocked);
    }
}

class NaiveVsExact : public ::testing::TestWithParam<Shape> {};

TEST_P(NaiveVsExact, Matches) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  for (Dist d : {Dist::GpuMode, Dist::Normal}) {
    CaseSpec spec;
    spec.problem = {GetParam(), d, 77};
    spec.kernel = "naive";
    spec.reference = "cpu-exact";
    spec.measure.warmup = 0;
    spec.measure.warmup_s = 0;
    spec.measure.iters = 1;
    const CaseResult r = run_case(spec, ctx);
    ASSERT_TRUE(r.verification);
    EXPECT_EQ(r.verification->mode, "full");
    EXPECT_EQ(r.disposition, Disposition::Passed) << r.message;
    EXPECT_EQ(r.verification->unwritten, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    GpuModeAndRagged, NaiveVsExact,
    ::testing::Values(Shape{128, 256, 256, 1}, Shape{128, 1536, 7168, 1}, Shape{128, 3072, 1536, 1},
                      Shape{256, 7168, 256, 1}, Shape{256, 7168, 2048, 1}, Shape{2304, 4608, 7168, 1},
                      Shape{384, 7168, 2304, 1}, Shape{512, 512, 7168, 1}, Shape{512, 4096, 512, 1},
                      Shape{512, 1536, 7168, 1}, Shape{128, 256, 256, 3}, Shape{512, 4096, 512, 3},
                      Shape{256, 7168, 2048, 3}, Shape{200, 300, 512, 3}, Shape{1, 8, 16, 1},
                      Shape{129, 131, 80, 2}),
    [](const ::testing::TestParamInfo<Shape>& i) {
      return std::to_string(i.param.m) + "x" + std::to_string(i.param.n) + "x" +
             std::to_string(i.param.k) + "_L" + std::to_string(i.param.l);
    });
