#include "src/device/device_info.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "src/core/error.hpp"

namespace nvfp4 {

// Why cudaGetDeviceCount found nothing, in terms of what is missing: the runtime reports
// "driver version is insufficient" also when there is no driver at all.
std::string no_gpu_reason_for(int cuda_error, int driver_version, int runtime_version,
                              bool have_driver_library, bool have_device_nodes,
                              const char* visible_devices) {
  const auto err = static_cast<cudaError_t>(cuda_error);
  auto ver = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
  if (!have_driver_library)
    return "no NVIDIA driver library (libcuda.so.1 cannot be loaded)";
  if (!have_device_nodes) return "no NVIDIA device nodes (/dev/nvidiactl, /dev/nvidia0)";
  if (visible_devices && (err == cudaErrorNoDevice || err == cudaSuccess) &&
      std::string(visible_devices).find_first_not_of(" ,") == std::string::npos)
    return fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every device", visible_devices);
  if (err == cudaErrorInsufficientDriver && driver_version > 0)
    return fmt::format("the NVIDIA driver supports CUDA {}, this build needs CUDA {}",
                       ver(driver_version), ver(runtime_version));
  if (err == cudaSuccess) return "no CUDA device";
  return fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(err));
}

namespace {

bool driver_library_loads() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) return false;
  dlclose(h);
  return true;
}

bool device_nodes_exist() {
  return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0 ||
         access("/dev/dxg", F_OK) == 0;  // WSL
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  (void)cudaRuntimeGetVersion(&d.runtime_version);
  (void)cudaDriverGetVersion(&d.driver_version);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    d.no_gpu_reason = no_gpu_reason_for(int(err), d.driver_version, d.runtime_version,
                                        driver_library_loads(), device_nodes_exist(),
                                        std::getenv("CUDA_VISIBLE_DEVICES"));
    (void)cudaGetLastError();
    return d;
  }
  if (ordinal < 0 || ordinal >= count) {
    d.no_gpu_reason = fmt::format("device {} requested, {} present", ordinal, count);
    return d;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, ordinal) != cudaSuccess) {
    d.no_gpu_reason = "cudaGetDeviceProperties failed";
    (void)cudaGetLastError();
    return d;
  }
  d.has_gpu = true;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  d.global_mem_bytes = p.totalGlobalMem;
  (void)cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, ordinal);
  (void)cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, ordinal);
  (void)cudaDeviceGetAttribute(&d.mem_bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal);
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) == cudaSuccess) d.pci_bus_id = bus;
  // Only with a GPU: cuBLASLt is loaded on first use (cublaslt_library.hpp), and a host run never
  // uses it. Where it cannot be loaded the version stays 0 and the cuBLASLt implementations say
  // why they are unavailable.
  try {
    d.cublaslt_version = cublasLtGetVersion();
  } catch (const Error&) {
  }
  return d;
}

}  // namespace nvfp4
