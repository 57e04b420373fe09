// The physical floor (src/measure/floor.hpp): the fastest tensor rate of every GPU in the table,
// the H200 and B200 figures at the bench shapes worked out by hand, the memory term only where
// L2 was flushed, the host bound, and the refusal line naming both figures.
#include <gtest/gtest.h>

#include "src/device/device_info.hpp"
#include "src/measure/floor.hpp"
#include "src/problem/problem.hpp"

using namespace nvfp4;

namespace {

GpuSpec spec(const std::string& name, int major, int minor) {
  return find_gpu_spec(name, major, minor).value_or(GpuSpec{});
}

}  // namespace

TEST(Floor, FastestRateIsTheBestFormatOfEachGpu) {
  std::string format;
  EXPECT_DOUBLE_EQ(fastest_tensor_tflops(spec("NVIDIA H200", 9, 0), &format), 1979.0);
  EXPECT_EQ(format, "fp8");  // Hopper: FP8 (and INT8) dense, no FP4 tensor cores
  EXPECT_DOUBLE_EQ(fastest_tensor_tflops(spec("NVIDIA B200", 10, 0), &format), 9000.0);
  EXPECT_EQ(format, "fp4");
  EXPECT_DOUBLE_EQ(fastest_tensor_tflops(spec("NVIDIA A100-SXM4-80GB", 8, 0), &format), 312.0);
  EXPECT_EQ(format, "fp16");
  for (const GpuSpec& g : gpu_specs()) {
    // Never above the speed of light's rate: the floor undercuts it.
    const double sol_rate = speed_of_light({128, 7168, 16384, 1}, 1, g, Numerics::FP4).tflops;
    EXPECT_GE(fastest_tensor_tflops(g), sol_rate) << g.name;
  }
}

TEST(Floor, H200AtTheBenchShapes) {
  const GpuSpec h200 = spec("NVIDIA H200", 9, 0);
  // 128x7168x16384: 2*128*7168*16384 = 30.06 GFLOP at 1979 TFLOP/s = 15.19 us; the minimum
  // traffic at 4.8 TB/s is less, so compute sets the floor.
  const Shape big{128, 7168, 16384, 1};
  const Floor f = gpu_floor(big, h200, true);
  ASSERT_TRUE(f.known);
  EXPECT_NEAR(f.compute_s * 1e6, 2.0 * 128 * 7168 * 16384 / 1979e12 * 1e6, 1e-9);
  EXPECT_NEAR(f.compute_s * 1e6, 15.19, 0.01);
  EXPECT_NEAR(f.memory_s * 1e6, double(TensorBytes::of(big).min_traffic()) / 4.8e12 * 1e6, 1e-9);
  EXPECT_NEAR(f.memory_s * 1e6, 14.39, 0.01);  // 69.07 MB
  EXPECT_LT(f.memory_s, f.compute_s);
  EXPECT_DOUBLE_EQ(f.floor_s, f.compute_s);
  EXPECT_NE(f.basis.find("1979 TFLOP/s fp8 dense"), std::string::npos) << f.basis;
  EXPECT_NE(f.basis.find("4.8 TB/s DRAM"), std::string::npos) << f.basis;
  // 128x7168x2048 moves ~8 MB for 3.8 GFLOP: memory sets it when L2 was flushed ...
  const Shape small{128, 7168, 2048, 1};
  const Floor cold = gpu_floor(small, h200, true);
  EXPECT_GT(cold.memory_s, cold.compute_s);
  EXPECT_DOUBLE_EQ(cold.floor_s, cold.memory_s);
  // ... and not in hot mode, where the operands may sit in L2.
  const Floor hot = gpu_floor(small, h200, false);
  EXPECT_FALSE(hot.memory_counted);
  EXPECT_EQ(hot.memory_s, 0);
  EXPECT_DOUBLE_EQ(hot.floor_s, hot.compute_s);
  EXPECT_NE(hot.basis.find("no memory floor"), std::string::npos) << hot.basis;
  // Below the speed of light, which uses FP16 on Hopper.
  EXPECT_LT(f.floor_s, speed_of_light(big, min_traffic_bytes(big), h200, Numerics::FP4).sol_s);
}

TEST(Floor, B200UsesFp4) {
  const Floor f = gpu_floor({128, 7168, 16384, 1}, spec("NVIDIA B200", 10, 0), true);
  EXPECT_NEAR(f.compute_s, 2.0 * 128 * 7168 * 16384 / 9000e12, 1e-15);
}

TEST(Floor, HostBoundScalesWithThreads) {
  const Shape s{512, 256, 768, 1};
  const Floor one = host_floor(s, 1), two = host_floor(s, 2);
  ASSERT_TRUE(one.known);
  EXPECT_DOUBLE_EQ(one.tflops, kHostFloorOpsPerCycle * kHostFloorGhz * 1e-3);  // 24.6 TFLOP/s
  EXPECT_NEAR(one.floor_s, s.flops() / 24.576e12, 1e-15);
  EXPECT_DOUBLE_EQ(two.floor_s * 2, one.floor_s);
  EXPECT_FALSE(one.memory_counted);
  EXPECT_DOUBLE_EQ(host_floor(s, 0).floor_s, one.floor_s);  // unknown count: one thread
  DeviceInfo none;
  EXPECT_TRUE(floor_for(s, none, true).known);
}

TEST(Floor, UnknownGpuHasNone) {
  DeviceInfo dev;
  dev.has_gpu = true;
  dev.name = "NVIDIA GeForce RTX 4090";
  dev.cc_major = 8;
  dev.cc_minor = 9;
  const Floor f = floor_for({128, 128, 128, 1}, dev, true);
  EXPECT_FALSE(f.known);
  EXPECT_NE(f.reason.find("not in the speed-of-light table"), std::string::npos) << f.reason;
  EXPECT_EQ(below_floor(0.001, f), "");  // nothing to refuse against
}

TEST(Floor, BelowIsRefusedWithBothFigures) {
  const Floor f = gpu_floor({128, 7168, 16384, 1}, spec("NVIDIA H200", 9, 0), true);
  EXPECT_EQ(below_floor(15.2, f), "");
  EXPECT_EQ(below_floor(76.58, f), "");
  const std::string why = below_floor(1.28, f);
  EXPECT_NE(why.find("timed at 1.28 us, below the physical floor of 15.19 us"), std::string::npos) << why;
  EXPECT_NE(why.find("compute 15.19 us, memory "), std::string::npos) << why;
  EXPECT_NE(why.find("NVIDIA H200 SXM"), std::string::npos) << why;
}
