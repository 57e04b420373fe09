// What the tool knows of the machine it runs on: the GPU (if any) and the library versions.
#pragma once

#include <cstddef>
#include <string>

namespace nvfp4 {

struct DeviceInfo {
  bool has_gpu = false;
  std::string no_gpu_reason;  // why the host backend is used
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  size_t global_mem_bytes = 0;
  int clock_khz = 0;         // default SM clock
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
  int driver_version = 0;    // e.g. 13000
  int runtime_version = 0;
  size_t cublaslt_version = 0;  // 0: cuBLASLt not loaded (no GPU, or it cannot be loaded)
  std::string pci_bus_id;

  int cc() const { return cc_major * 10 + cc_minor; }
  std::string cc_string() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
};

// The no-GPU reason from what is missing, most basic first: the driver library, the device nodes,
// every device hidden by CUDA_VISIBLE_DEVICES, a driver really too old (its CUDA version), else
// the runtime's error text. cuda_error is cudaGetDeviceCount's (cudaSuccess: 0 devices).
std::string no_gpu_reason_for(int cuda_error, int driver_version, int runtime_version,
                              bool have_driver_library, bool have_device_nodes,
                              const char* visible_devices);

// Queries device `ordinal`; never throws for a missing GPU (has_gpu = false, reason set).
DeviceInfo query_device(int ordinal = 0);

}  // namespace nvfp4
