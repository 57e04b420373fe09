// The sm100 kernel as the tool sees it, on any machine: registered under its name as a kernel,
// available on compute capability 10.0 and 10.3 (the sm_100f family) only, with a reason naming
// the GPU otherwise, and its shape rules. (Running it needs a B200; bench/notes-sm100.md has that checklist.)
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <string>
#include <vector>

#include "src/device/map_cache.hpp"
#include "src/core/error.hpp"
#include "src/device/device_info.hpp"
#include "src/registry/registry.hpp"
#include "kernels/sm100/targets.hpp"

using namespace nvfp4;

TEST(Sm100Kernel, IsRegisteredAsAKernel) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name(), "sm100");
  EXPECT_EQ(g->role(), Role::Kernel);
  EXPECT_EQ(g->space(), Space::Device);
  EXPECT_EQ(g->auto_rank(), 0);  // never auto-picked before a B200 has verified it
}

// The gate's decision per compute capability: the sm_100f family (10.0 B200/GB200, 10.3
// B300/GB300) runs the kernel's code; 11.0 (Thor), 12.x (RTX PRO, DGX Spark), Hopper and older
// do not. availability() and the rule in kernels/sm100/targets.hpp agree on every one.
TEST(Sm100Kernel, AvailableOnTheSm100fFamilyOnly) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  for (const DeviceInfo& d : {fake_gpu("NVIDIA B200", 10, 0), fake_gpu("NVIDIA B300", 10, 3)}) {
    EXPECT_TRUE(g->availability(d).ok) << d.name;
    EXPECT_TRUE(sm100::code_runs_on(d.cc_major, d.cc_minor)) << d.name;
  }
  for (const DeviceInfo& d :
       {fake_gpu("NVIDIA H200", 9, 0), fake_gpu("a cc 10.1 GPU", 10, 1),
        fake_gpu("a cc 10.2 GPU", 10, 2), fake_gpu("NVIDIA Thor", 11, 0),
        fake_gpu("NVIDIA RTX PRO 6000", 12, 0), fake_gpu("NVIDIA DGX Spark", 12, 1),
        fake_gpu("NVIDIA A100", 8, 0)}) {
    const Availability a = g->availability(d);
    EXPECT_FALSE(a.ok) << d.name;
    EXPECT_FALSE(sm100::code_runs_on(d.cc_major, d.cc_minor)) << d.name;
    EXPECT_NE(a.reason.find(d.name), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find(d.cc_string()), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find("10.0 or 10.3"), std::string::npos) << a.reason;
    EXPECT_NE(a.reason.find("sm_100f"), std::string::npos) << a.reason;
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

// Review finding: M or N of 2^31 would overflow the int the kernel holds them in.
TEST(Sm100Kernel, ShapeRulesStopBelow2To31) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  const int64_t big = int64_t{1} << 31;
  EXPECT_NE(g->shape_error({1, big, 256, 1}).find("below 2^31"), std::string::npos);
  EXPECT_NE(g->shape_error({big, 32, 256, 1}).find("below 2^31"), std::string::npos);
  EXPECT_EQ(g->shape_error({1, big - 32, 256, 1}), "");
}

// Review finding: the epilogue's 16-byte stores need a 16-byte aligned C (and workspace); a
// plugin or Python caller may pass other pointers. Refused before any CUDA call, so this
// holds on a machine without a GPU.
TEST(Sm100Kernel, RefusesMisalignedOutput) {
  const auto g = make_gemm("sm100", Role::Kernel);
  ASSERT_NE(g, nullptr);
  alignas(16) static uint16_t c[64];
  Operands ops;
  ops.c = c + 1;  // 2-byte aligned
  try {
    g->run({128, 256, 256, 1}, ops, nullptr, nullptr);
    FAIL() << "a misaligned C was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitRuntime);
    EXPECT_NE(std::string(e.what()).find("C ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
  }
  ops.c = c;
  try {
    g->run({128, 256, 256, 1}, ops, reinterpret_cast<uint8_t*>(c) + 4, nullptr);
    FAIL() << "a misaligned workspace was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
}

// Review finding: rotate mode cycles through operand copies; the tensor-map cache must keep
// one entry per copy so timed launches do not re-encode, and stay bounded.
TEST(Sm100Kernel, MapCacheKeepsOneEntryPerOperandSet) {
  MapCache<int> cache(64);
  int encodes = 0;
  std::vector<uint8_t> bufs(40 * 16);
  auto ops_of = [&](int i) {
    Operands o;
    o.a = o.b = o.sfa_blocked = o.sfb_blocked = bufs.data() + 16 * i;
    return o;
  };
  const Shape s{128, 7168, 2048, 1};
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 0; i < 40; ++i)
      EXPECT_EQ(cache.get(MapKey::of(s, ops_of(i)), [&] { return ++encodes, i; }), i);
  EXPECT_EQ(encodes, 40);  // once per copy, not once per launch
  EXPECT_EQ(cache.size(), 40u);
  // Another shape on the same buffers is another entry.
  cache.get(MapKey::of({256, 7168, 2048, 1}, ops_of(0)), [&] { return ++encodes; });
  EXPECT_EQ(encodes, 41);
  // Bounded: past the capacity the oldest entries go.
  MapCache<int> small(8);
  for (int i = 0; i < 40; ++i) small.get(MapKey::of(s, ops_of(i)), [&] { return i; });
  EXPECT_EQ(small.size(), 8u);
  int again = 0;
  small.get(MapKey::of(s, ops_of(39)), [&] { return ++again; });
  small.get(MapKey::of(s, ops_of(0)), [&] { return ++again; });
  EXPECT_EQ(again, 1);  // the newest was kept, the oldest re-encoded
}
