#include "src/sweep/devices.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <set>
#include <sstream>

#include "src/core/error.hpp"
#include "src/core/number_text.hpp"

namespace nvfp4::sweep {

std::vector<std::optional<int>> resolve_devices(const std::string& spec, int device_count) {
  if (spec.empty()) return {std::nullopt};
  if (spec == "all") {
    if (device_count <= 0) return {std::nullopt};
    std::vector<std::optional<int>> out;
    for (int d = 0; d < device_count; ++d) out.push_back(d);
    return out;
  }
  // Each item is checked before the device count: "x" is a typo on any machine.
  std::vector<std::optional<int>> out;
  std::set<int> seen;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int d = -1;
    if (!integer_text_problem<int>(item, &d).empty() || d < 0)
      throw usage_error(
          fmt::format("--devices {}: '{}' is not a device ordinal (expected all or a "
                      "list like 0,1)",
                      spec, item));
    if (!seen.insert(d).second)
      throw usage_error(fmt::format("--devices {}: device {} listed twice", spec, d));
    out.push_back(d);
  }
  if (!out.empty() && device_count <= 0)
    throw usage_error(
        fmt::format("--devices {}: no CUDA device here (use all, or leave it out, to "
                    "run on the host backend)",
                    spec));
  for (const auto& d : out)
    if (*d >= device_count)
      throw usage_error(
          fmt::format("--devices {}: device {} requested, {} present", spec, *d, device_count));
  if (out.empty())
    throw usage_error(fmt::format("--devices '{}': expected all or a list like 0,1", spec));
  return out;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace nvfp4::sweep
