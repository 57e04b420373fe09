// The plugin loader through the Gemm interface: registration, the wrapped callbacks, the
// plugin's status turned into exit code 3, idempotent loading, and the registry's name rule.
#include <gtest/gtest.h>

#include "src/case/run_case.hpp"
#include "src/core/error.hpp"
#include "src/registry/plugin_loader.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "src/registry/registry.hpp"

using namespace nvfp4;

namespace {
const std::string kDir = NVFP4_PLUGIN_DIR;
const std::string kExample = kDir + "/libnvfp4_example_host.so";
const std::string kBroken = kDir + "/libnvfp4_broken_host.so";

int exit_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}
}  // namespace

TEST(PluginLoader, RegistersKernelsThatComputeTheGemm) {
  const auto names = load_kernel_library(kExample);
  ASSERT_EQ(names, std::vector<std::string>{"example-host"});
  auto g = make_gemm("example-host", Role::Kernel);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->space(), Space::Host);
  EXPECT_NE(g->description().find("[plugin "), std::string::npos);
  EXPECT_TRUE(g->availability(DeviceInfo{}).ok);

  const Shape s{33, 17, 160, 2};
  HostTensors t;
  t.allocate(s);
  generate_host({s, Dist::Normal, 4}, t);
  std::vector<uint16_t> got(size_t(s.l * s.m * s.n), kPoisonFp16);
  Operands ops = t.view();
  ops.c = got.data();
  g->run(s, ops, nullptr, nullptr);
  exact_gemm(s, t.view());
  const auto v = verify_full(s, got.data(), t.c.data(), {});
  EXPECT_TRUE(v.passed()) << v.mismatches << " mismatches, " << v.unwritten << " unwritten";
}

TEST(PluginLoader, LoadingTheSameFileTwiceIsANoOp) {
  const auto first = load_kernel_library(kBroken);
  const auto size = registry().size();
  EXPECT_EQ(load_kernel_library(kDir + "/../plugins/libnvfp4_broken_host.so"), first);
  EXPECT_EQ(registry().size(), size);
  int seen = 0;
  for (const auto& p : loaded_kernel_libraries()) seen += p.find("libnvfp4_broken_host.so") != std::string::npos;
  EXPECT_EQ(seen, 1);
}

TEST(PluginLoader, StatusAndShapeCheckReachTheTool) {
  load_kernel_library(kBroken);
  auto status = make_gemm("broken-status-host", Role::Kernel);
  ASSERT_TRUE(status);
  const Shape s{16, 16, 64, 1};
  HostTensors t;
  t.allocate(s);
  try {
    status->run(s, t.view(), nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitRuntime);
    const std::string what = e.what();
    EXPECT_NE(what.find("deliberate failure for the tests second line"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  auto k64 = make_gemm("k64-host", Role::Kernel);
  ASSERT_TRUE(k64);
  EXPECT_EQ(k64->shape_error({16, 16, 64, 1}), "");
  EXPECT_EQ(k64->shape_error({16, 16, 48, 1}), "K must be a multiple of 64");
}

TEST(PluginLoader, RefusalsAreUsageErrors) {
  for (const char* bad : {"bad_abi", "no_entry", "clash", "empty", "bad_name"})
    EXPECT_EQ(exit_code_of([&] { load_kernel_library(kDir + "/libnvfp4_bad_" + bad + ".so"); }),
              kExitBadInput)
        << bad;
  EXPECT_EQ(exit_code_of([] { load_kernel_library("/nonexistent/lib.so"); }), kExitBadInput);
  EXPECT_FALSE(make_gemm("bad-plugin", Role::Kernel));  // nothing of a refused table registered
}

TEST(Registry, NamesAreUniqueAcrossRoles) {
  EXPECT_TRUE(gemm_name_taken("cpu-exact"));
  EXPECT_FALSE(register_gemm({"cpu-exact", Role::Kernel, [] { return make_gemm("host", Role::Kernel); }}));
  EXPECT_TRUE(register_gemm({"host-again", Role::Kernel, [] { return make_gemm("host", Role::Kernel); }}));
  EXPECT_TRUE(make_gemm("host-again", Role::Kernel));
}
