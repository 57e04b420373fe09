// GPU tests skip loudly, with the reason, on machines without a CUDA device.
#pragma once

#include <gtest/gtest.h>

#include "src/device/device_info.hpp"

#define NVFP4_REQUIRE_GPU()                                                              \
  do {                                                                                   \
    const ::nvfp4::DeviceInfo nvfp4_dev_ = ::nvfp4::query_device(0);                     \
    if (!nvfp4_dev_.has_gpu) GTEST_SKIP() << "needs a CUDA GPU: " << nvfp4_dev_.no_gpu_reason; \
  } while (0)

#include <ostream>
#include <string>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {
// A GPU as described to availability checks, for tests of what would run where.
inline DeviceInfo fake_gpu(const std::string& name, int major, int minor) {
  DeviceInfo d;
  d.has_gpu = true;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}

// Readable parameter names in gtest output ("128x256x256 L=1" rather than a byte dump).
inline void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.m << "x" << s.n << "x" << s.k << " L=" << s.l;
}
}  // namespace nvfp4
