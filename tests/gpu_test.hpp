// GPU tests skip loudly, with the reason, on machines without a CUDA device.
#pragma once

#include <gtest/gtest.h>

#include "device/device_info.hpp"

#define NVFP4_REQUIRE_GPU()                                                              \
  do {                                                                                   \
    const ::nvfp4::DeviceInfo nvfp4_dev_ = ::nvfp4::query_device(0);                     \
    if (!nvfp4_dev_.has_gpu) GTEST_SKIP() << "needs a CUDA GPU: " << nvfp4_dev_.no_gpu_reason; \
  } while (0)
