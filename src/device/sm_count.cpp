#include "src/device/sm_count.hpp"

#include <cuda_runtime_api.h>

namespace nvfp4 {

int device_sm_count(int device) {
  int sms = 0;
  if ((device < 0 && cudaGetDevice(&device) != cudaSuccess) ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 0) {
    (void)cudaGetLastError();
    return 0;
  }
  return sms;
}

}  // namespace nvfp4
