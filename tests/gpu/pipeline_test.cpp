// GPU: operand generation is bit-identical to the host twin, and the naive kernel matches the
// exact reference on the GPU MODE test shapes (L = 1 and 3) and on ragged shapes.
#include <gtest/gtest.h>

#include <vector>

#include "src/case/run_case.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cuda_check.hpp"
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

// The verdict's C fill and gather (generate.cu) against their host twins: the verdict compares
// what the device gathered with host-side expectations built from the same seeds.
TEST(GpuGenerate, FillAndGatherMatchHost) {
  NVFP4_REQUIRE_GPU();
  Context ctx = Context::create(0);
  constexpr int64_t kElems = 70 * 130 * 3;
  constexpr int kSlots = 3;
  DeviceBuffer c(size_t(kElems) * kSlots * 2);
  fill_random_device(c.get<uint16_t>(), kElems, kSlots, 99, ctx.stream->get());
  std::vector<uint16_t> host(size_t(kElems) * kSlots);
  fill_random_host(host.data(), kElems, kSlots, 99);
  for (int64_t per_slot : {int64_t(1000), kElems}) {  // random coordinates; every element in order
    const int64_t got_n = per_slot * kSlots;
    DeviceBuffer out(size_t(got_n) * 2);
    gather_device(c.get<uint16_t>(), kElems, kSlots, per_slot, 5, out.get<uint16_t>(), ctx.stream->get());
    ctx.stream->sync();
    std::vector<uint16_t> dev(static_cast<size_t>(got_n)), want(static_cast<size_t>(got_n));
    NVFP4_CUDA_CHECK(cudaMemcpy(dev.data(), out.get(), size_t(got_n) * 2, cudaMemcpyDeviceToHost));
    gather_host(host.data(), kElems, kSlots, per_slot, 5, want.data());
    EXPECT_EQ(dev, want) << "per_slot " << per_slot;
  }
  std::vector<uint16_t> filled(host.size());
  NVFP4_CUDA_CHECK(cudaMemcpy(filled.data(), c.get(), filled.size() * 2, cudaMemcpyDeviceToHost));
  EXPECT_EQ(filled, host);
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
