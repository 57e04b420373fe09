// The GPUs a sweep's workers run on (--devices).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nvfp4::sweep {

// The workers' devices: nullopt is the default device (or the host backend). Throws usage_error.
std::vector<std::optional<int>> resolve_devices(const std::string& spec, int device_count);

// How many CUDA devices this process sees (0 without a driver or device).
int cuda_device_count();

}  // namespace nvfp4::sweep
