// The no-GPU reason names what is missing: the runtime says "CUDA driver
// version is insufficient" also on a machine with no driver at all.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "src/device/device_info.hpp"

using namespace nvfp4;

TEST(NoGpuReason, SaysWhatIsMissingMostBasicFirst) {
  const int insufficient = int(cudaErrorInsufficientDriver), none = int(cudaErrorNoDevice);
  EXPECT_EQ(no_gpu_reason_for(insufficient, 0, 12080, false, false, nullptr),
            "no NVIDIA driver library (libcuda.so.1 cannot be loaded)");
  EXPECT_EQ(no_gpu_reason_for(insufficient, 0, 12080, true, false, nullptr),
            "no NVIDIA device nodes (/dev/nvidiactl, /dev/nvidia0)");
  EXPECT_EQ(no_gpu_reason_for(none, 12080, 12080, true, true, ""),
            "CUDA_VISIBLE_DEVICES=\"\" hides every device");
  EXPECT_EQ(no_gpu_reason_for(insufficient, 12020, 12080, true, true, nullptr),
            "the NVIDIA driver supports CUDA 12.2, this build needs CUDA 12.8");
  EXPECT_EQ(no_gpu_reason_for(0, 12080, 12080, true, true, nullptr), "no CUDA device");
  EXPECT_NE(no_gpu_reason_for(none, 12080, 12080, true, true, "3").find("cudaGetDeviceCount: "),
            std::string::npos);
}
