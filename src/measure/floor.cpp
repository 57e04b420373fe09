#include "src/measure/floor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "src/device/device_info.hpp"

namespace nvfp4 {

double fastest_tensor_tflops(const GpuSpec& gpu, std::string* format) {
  const std::pair<double, const char*> rates[] = {
      {gpu.fp4_tflops, "fp4"}, {gpu.fp8_tflops, "fp8"}, {gpu.fp16_tflops, "fp16"}};
  const auto* best = std::max_element(std::begin(rates), std::end(rates),
                                      [](const auto& a, const auto& b) { return a.first < b.first; });
  if (format) *format = best->second;
  return best->first;
}

Floor gpu_floor(const Shape& s, const GpuSpec& gpu, bool operands_cold) {
  Floor f;
  std::string format;
  f.tflops = fastest_tensor_tflops(gpu, &format);
  f.bandwidth_tbs = gpu.bandwidth_tbs;
  if (f.tflops <= 0) {
    f.reason = fmt::format("{} has no tensor rate in the table", gpu.name);
    return f;
  }
  f.known = true;
  f.compute_s = s.flops() / (f.tflops * 1e12);
  f.memory_counted = operands_cold && f.bandwidth_tbs > 0;
  if (f.memory_counted) f.memory_s = min_traffic_bytes(s) / (f.bandwidth_tbs * 1e12);
  f.floor_s = std::max(f.compute_s, f.memory_s);
  f.basis = fmt::format("{}: {:.4g} TFLOP/s {} dense{}", gpu.name, f.tflops, format,
                        f.memory_counted ? fmt::format(", {:.3g} TB/s DRAM", f.bandwidth_tbs)
                                         : std::string(", operands in L2 (hot): no memory floor"));
  return f;
}

Floor host_floor(const Shape& s, int hardware_threads) {
  Floor f;
  const int threads = std::max(1, hardware_threads);
  f.known = true;
  f.tflops = threads * kHostFloorOpsPerCycle * kHostFloorGhz * 1e-3;
  f.compute_s = s.flops() / (f.tflops * 1e12);
  f.floor_s = f.compute_s;
  f.basis = fmt::format("host: {} hardware threads x {:.0f} operations per cycle x {:.0f} GHz, "
                        "above any CPU's dense matrix rate",
                        threads, kHostFloorOpsPerCycle, kHostFloorGhz);
  return f;
}

Floor floor_for(const Shape& s, const DeviceInfo& dev, bool operands_cold) {
  if (!dev.has_gpu) return host_floor(s, int(std::thread::hardware_concurrency()));
  const std::optional<GpuSpec> g = find_gpu_spec(dev.name, dev.cc_major, dev.cc_minor);
  if (!g) {
    Floor f;
    f.reason = fmt::format("GPU '{}' (compute capability {}) is not in the speed-of-light table",
                           dev.name, dev.cc_string());
    return f;
  }
  return gpu_floor(s, *g, operands_cold);
}

std::string below_floor(double median_us, const Floor& f) {
  if (!f.known || median_us >= f.floor_s * 1e6) return {};
  return fmt::format("timed at {:.4g} us, below the physical floor of {:.4g} us (compute {:.4g} us"
                     "{}; {}): the timed calls cannot have done the work",
                     median_us, f.floor_s * 1e6, f.compute_s * 1e6,
                     f.memory_counted ? fmt::format(", memory {:.4g} us", f.memory_s * 1e6) : "",
                     f.basis);
}

}  // namespace nvfp4
