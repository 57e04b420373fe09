#include "src/device/device_info.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace nvfp4 {

DeviceInfo query_device(int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.cublaslt_version = cublasLtGetVersion();
  (void)cudaRuntimeGetVersion(&d.runtime_version);
  (void)cudaDriverGetVersion(&d.driver_version);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    d.no_gpu_reason = err != cudaSuccess
                          ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(err))
                          : std::string("no CUDA device");
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
  return d;
}

}  // namespace nvfp4
