// The sm100 kernel as the tool sees it, on any machine: registered under its name as a kernel,
// available only on compute capability 10.0 with a reason naming the GPU otherwise, and its
// shape rules. (Running it needs a B200; bench/notes-sm100.md has that checklist.)
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <string>

#include "src/device/device_info.hpp"
#include "src/registry/registry.hpp"

using namespace nvfp4;

TEST(Sm100Kernel, IsRegisteredAsAKernel) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name(), "sm100");
  EXPECT_EQ(g->role(), Role::Kernel);
  EXPECT_EQ(g->space(), Space::Device);
  EXPECT_EQ(g->auto_rank(), 0);  // never auto-picked before a B200 has verified it
}

TEST(Sm100Kernel, AvailableOnlyOnComputeCapability10_0) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->availability(fake_gpu("NVIDIA B200", 10, 0)).ok);
  for (const DeviceInfo& d : {fake_gpu("NVIDIA H200", 9, 0), fake_gpu("NVIDIA B300", 10, 3),
                              fake_gpu("NVIDIA RTX PRO 6000", 12, 0), fake_gpu("NVIDIA A100", 8, 0)}) {
    const Availability a = g->availability(d);
    EXPECT_FALSE(a.ok) << d.name;
    EXPECT_NE(a.reason.find(d.name), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find(d.cc_string()), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find("10.0"), std::string::npos) << a.reason;
  }
  DeviceInfo none;
  none.no_gpu_reason = "no CUDA driver";
  const Availability a = g->availability(none);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("no CUDA driver"), std::string::npos) << a.reason;
}

TEST(Sm100Kernel, ShapeRules) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  // Every GPU MODE test and benchmark shape is accepted.
  const Shape ok[] = {{128, 256, 256, 1},   {128, 1536, 7168, 1},  {128, 3072, 1536, 1},
                      {256, 7168, 256, 1},  {256, 7168, 2048, 1},  {2304, 4608, 7168, 1},
                      {384, 7168, 2304, 1}, {512, 512, 7168, 1},   {512, 4096, 512, 1},
                      {512, 1536, 7168, 1}, {128, 7168, 16384, 1}, {128, 4096, 7168, 1},
                      {128, 7168, 2048, 1}, {200, 96, 512, 3}};
  for (const Shape& s : ok) EXPECT_EQ(g->shape_error(s), "") << s.m << "x" << s.n << "x" << s.k;
  EXPECT_NE(g->shape_error({128, 256, 128, 1}).find("K must be a multiple of 256"),
            std::string::npos);
  EXPECT_NE(g->shape_error({128, 240, 256, 1}).find("N must be a multiple of 32"),
            std::string::npos);
}

TEST(Sm100Kernel, WorkspaceOnlyForSplitK) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  // 648 tiles fill any GPU: no split, no workspace.
  EXPECT_EQ(g->workspace_bytes({2304, 4608, 7168, 1}), 0u);
  // One 128x128 tile with 64 K tiles splits (the split count depends on the SM count, at
  // least 2 on any GPU with 2+ SMs): one FP32 128x128 partial per split.
  const size_t ws = g->workspace_bytes({128, 128, 16384, 1});
  EXPECT_GE(ws, 2u * 128 * 128 * 4);
  EXPECT_EQ(ws % (128 * 128 * 4), 0u);
}
