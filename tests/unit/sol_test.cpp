// The speed-of-light table and arithmetic: GPU matching, GPU MODE's B200 figures, the H200
// floors of docs/facts.md section 6, the FP16 fallback without FP4 tensor cores, unknown GPUs.
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cmath>

#include "src/device/device_info.hpp"
#include "src/measure/sol.hpp"
#include "src/problem/problem.hpp"

using namespace nvfp4;

namespace {

GpuSpec spec(const std::string& device_name, int major, int minor) {
  const auto g = find_gpu_spec(device_name, major, minor);
  EXPECT_TRUE(g.has_value()) << device_name;
  return g.value_or(GpuSpec{});
}

const Shape kBench[3] = {{128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}};

}  // namespace

TEST(SolTable, MatchesByNameAndComputeCapability) {
  EXPECT_EQ(spec("NVIDIA H200", 9, 0).name, "NVIDIA H200 SXM");
  EXPECT_EQ(spec("NVIDIA H200 NVL", 9, 0).name, "NVIDIA H200 NVL");
  EXPECT_EQ(spec("NVIDIA H100 80GB HBM3", 9, 0).name, "NVIDIA H100 SXM");
  EXPECT_EQ(spec("NVIDIA H100 PCIe", 9, 0).name, "NVIDIA H100 PCIe");
  EXPECT_EQ(spec("NVIDIA B200", 10, 0).name, "NVIDIA B200");
  EXPECT_EQ(spec("NVIDIA GB200", 10, 0).name, "NVIDIA GB200");  // not the B200 entry
  EXPECT_EQ(spec("NVIDIA B300 SXM6 AC", 10, 3).name, "NVIDIA B300");
  EXPECT_FALSE(find_gpu_spec("NVIDIA H200", 10, 0));  // name matches, cc does not
  EXPECT_FALSE(find_gpu_spec("NVIDIA GeForce RTX 4090", 8, 9));
  for (const GpuSpec& g : gpu_specs()) {
    EXPECT_GT(g.fp16_tflops, 0) << g.name;
    EXPECT_GT(g.bandwidth_tbs, 0) << g.name;
    EXPECT_FALSE(g.source.empty()) << g.name;
    EXPECT_EQ(g.fp4_tflops > 0, g.cc_major >= 10) << g.name;  // FP4 MMAs: Blackwell on
  }
  const GpuSpec h200 = spec("NVIDIA H200", 9, 0);
  EXPECT_EQ(h200.measured_fp16_tflops, 790.0);
  EXPECT_EQ(h200.measured_bandwidth_tbs, 4.3);
}

TEST(SolMath, MinTrafficIsABlockedScalesAndFp16C) {
  const Shape s = kBench[0];
  // A 128*8192 + B 7168*8192 + blocked scales 128*1024 + 7168*1024 + C 128*7168*2
  EXPECT_EQ(min_traffic_bytes(s), 1048576.0 + 58720256.0 + 131072.0 + 7340032.0 + 1835008.0);
}

TEST(SolMath, GpuModeB200FiguresAtTheirBandwidth) {
  // GPU MODE lists 8.994 / 2.354 / 1.333 us, the minimum DRAM traffic at ~7.68 TB/s.
  GpuSpec b200 = spec("NVIDIA B200", 10, 0);
  b200.bandwidth_tbs = 7.68;
  const double expect_us[3] = {8.994, 2.354, 1.333};
  double log_sum = 0;
  for (int i = 0; i < 3; ++i) {
    const SolResult r =
        speed_of_light(kBench[i], min_traffic_bytes(kBench[i]), b200, Numerics::FP4);
    EXPECT_TRUE(r.known);
    EXPECT_TRUE(r.memory_bound) << i;
    EXPECT_STREQ(r.bound(), "memory");
    EXPECT_NEAR(r.sol_s * 1e6, expect_us[i], 0.0015) << i;
    EXPECT_EQ(r.compute_format, "fp4");
    EXPECT_NEAR(r.compute_s, kBench[i].flops() / 9000e12, 1e-15);
    log_sum += std::log(r.sol_s * 1e6);
  }
  EXPECT_NEAR(std::exp(log_sum / 3), 3.04, 0.01);  // GPU MODE's speed-of-light geometric mean
}

TEST(SolMath, B200DatasheetBandwidthAndAComputeBoundShape) {
  const GpuSpec b200 = spec("NVIDIA B200", 10, 0);
  const SolResult r = speed_of_light(kBench[0], min_traffic_bytes(kBench[0]), b200, Numerics::FP4);
  EXPECT_NEAR(r.memory_s, min_traffic_bytes(kBench[0]) / 8e12, 1e-15);
  const Shape big{8192, 8192, 8192, 1};
  const SolResult c = speed_of_light(big, min_traffic_bytes(big), b200, Numerics::FP4);
  EXPECT_FALSE(c.memory_bound);
  EXPECT_STREQ(c.bound(), "compute");
  EXPECT_NEAR(c.sol_s, 2.0 * 8192 * 8192 * 8192 / 9000e12, 1e-12);
}

TEST(SolMath, H200FloorsOfTheFactsSheet) {
  // docs/facts.md section 6: BF16 compute floor at 790 TF/s and FP4-bytes floor at 4.3 TB/s,
  // printed to the precision given there (the check: our figure rounds to the printed one).
  struct Row {
    Shape s;
    double compute_us, compute_half_unit, bytes_us, bytes_half_unit;
  };
  const Row rows[] = {
      {{128, 7168, 16384, 1}, 38.1, 0.05, 16.1, 0.05}, {{128, 4096, 7168, 1}, 9.5, 0.05, 4.2, 0.05},
      {{128, 7168, 2048, 1}, 4.8, 0.05, 2.4, 0.05},    {{1024, 7168, 16384, 1}, 304, 0.5, 21, 0.5},
      {{4096, 4096, 4096, 1}, 174, 0.5, 12, 0.5},      {{8192, 8192, 8192, 1}, 1392, 0.5, 49, 0.5},
  };
  const GpuSpec h200 = spec("NVIDIA H200", 9, 0);
  for (const Row& row : rows) {
    const SolResult r =
        speed_of_light(row.s, min_traffic_bytes(row.s), h200, Numerics::FP4, SolBasis::Measured);
    EXPECT_NEAR(r.compute_s * 1e6, row.compute_us, row.compute_half_unit)
        << row.s.m << "x" << row.s.n;
    EXPECT_NEAR(r.memory_s * 1e6, row.bytes_us, row.bytes_half_unit) << row.s.m << "x" << row.s.n;
    // No FP4 tensor cores on Hopper: the FP16 ceiling bounds NVFP4, and it is the bound here.
    EXPECT_EQ(r.compute_format, "fp16 (no fp4 tensor cores)");
    EXPECT_EQ(r.compute_basis, "measured");
    EXPECT_EQ(r.bandwidth_basis, "measured");
    EXPECT_FALSE(r.memory_bound);
    EXPECT_DOUBLE_EQ(r.sol_s, r.compute_s);
  }
}

TEST(SolMath, DatasheetBasisAndFormats) {
  const GpuSpec h200 = spec("NVIDIA H200", 9, 0);
  const Shape s = kBench[0];
  const SolResult d = speed_of_light(s, min_traffic_bytes(s), h200, Numerics::FP4);
  EXPECT_NEAR(d.compute_s, s.flops() / 989.5e12, 1e-15);
  EXPECT_NEAR(d.memory_s, min_traffic_bytes(s) / 4.8e12, 1e-15);
  EXPECT_EQ(d.compute_basis, "datasheet");
  const SolResult f8 = speed_of_light(s, min_traffic_bytes(s), h200, Numerics::FP8);
  EXPECT_EQ(f8.compute_format, "fp8");
  EXPECT_NEAR(f8.compute_s, s.flops() / 1979e12, 1e-15);
  // Measured basis only replaces figures that were measured: FP8 stays the datasheet's.
  const SolResult f8m =
      speed_of_light(s, min_traffic_bytes(s), h200, Numerics::FP8, SolBasis::Measured);
  EXPECT_EQ(f8m.compute_basis, "datasheet");
  EXPECT_EQ(f8m.bandwidth_basis, "measured");
  const GpuSpec a100 = spec("NVIDIA A100-SXM4-80GB", 8, 0);
  const SolResult a = speed_of_light(s, min_traffic_bytes(s), a100, Numerics::FP8);
  EXPECT_EQ(a.compute_format, "fp16 (no fp8 tensor cores)");
  EXPECT_NEAR(a.compute_s, s.flops() / 312e12, 1e-15);
}

TEST(SolMath, UnknownGpuIsReportedCleanly) {
  const SolResult r =
      speed_of_light_for(kBench[0], fake_gpu("NVIDIA GeForce RTX 4090", 8, 9), Numerics::FP4);
  EXPECT_FALSE(r.known);
  EXPECT_EQ(r.gpu, "unknown");
  EXPECT_STREQ(r.bound(), "unknown");
  EXPECT_EQ(r.sol_s, 0);
  EXPECT_EQ(
      r.reason,
      "GPU 'NVIDIA GeForce RTX 4090' (compute capability 8.9) is not in the speed-of-light table");
  DeviceInfo none;
  EXPECT_EQ(speed_of_light_for(kBench[0], none, Numerics::FP4).reason, "no CUDA GPU");
  const SolResult h = speed_of_light_for(kBench[0], fake_gpu("NVIDIA H200", 9, 0), Numerics::FP4);
  EXPECT_TRUE(h.known);
  EXPECT_EQ(h.gpu, "NVIDIA H200 SXM");
}
