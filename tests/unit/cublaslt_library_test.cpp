// cuBLASLt is opened on first use (src/device/cublaslt_library.hpp): a process that never calls
// it never maps the library, the first call maps it, and a library that cannot be opened is named
// in the error. CPU only (cuBLASLt builds descriptors without a GPU; the GPU case is
// GpuLtLibrary.* in tests/gpu/references_test.cpp). ctest runs each test in its
// own process, which the first test needs: it looks at the process before any cuBLASLt call.
#include <cublasLt.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "src/core/error.hpp"
#include "src/device/cublaslt_config.hpp"
#include "src/device/cublaslt_gemm.hpp"
#include "src/device/cublaslt_library.hpp"
#include "src/device/device_info.hpp"

using namespace nvfp4;

namespace {

// Whether a file named libcublasLt is mapped into this process (what the loader really did,
// not the loader's own flag).
bool cublaslt_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  return all.str().find("libcublasLt") != std::string::npos;
}

}  // namespace

TEST(LtLibrary, MappedOnlyOnceFirstUsed) {
  if (lt::library_loaded())
    GTEST_SKIP() << "an earlier test in this process used cuBLASLt: run this test alone "
                    "(ctest does)";
  ASSERT_FALSE(cublaslt_mapped()) << "libcublasLt is mapped before any cuBLASLt call";
  // A host query (no GPU here, or none visible) does not load it either.
  const DeviceInfo d = query_device(0);
  if (!d.has_gpu) {
    EXPECT_FALSE(cublaslt_mapped());
    EXPECT_EQ(d.cublaslt_version, 0u);
  }
  const lt::Descriptors desc(lt::make_nvfp4_config(Shape{128, 256, 512, 1}, lt::OutType::F16),
                             1 << 20);
  EXPECT_TRUE(lt::library_loaded());
  EXPECT_TRUE(cublaslt_mapped());
  EXPECT_GE(cublasLtGetVersion(), size_t(130000));  // the headers' major version, 13
}

TEST(LtLibrary, AMissingLibraryIsNamedWithDlopensReason) {
  std::string reason;
  EXPECT_EQ(lt::open_library("libcublasLt.so.999", "/nonexistent-dir", reason), nullptr);
  EXPECT_NE(reason.find("libcublasLt.so.999"), std::string::npos) << reason;
  EXPECT_NE(reason.find("/nonexistent-dir/libcublasLt.so.999"), std::string::npos) << reason;
  EXPECT_EQ(std::string(lt::library_name()), "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR));
}

TEST(LtLibrary, TheRealLibraryOpensByNameOrFromTheToolkit) {
  std::string reason;
  void* h = lt::open_library(lt::library_name(), "", reason);
  ASSERT_NE(h, nullptr) << reason;
  EXPECT_EQ(h, lt::library());  // one library, however it is reached
}
