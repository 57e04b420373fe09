// --kernel-py in a build without Python (NVFP4_PYTHON_KERNELS off or pybind11 / the Python
// development files not found): refused before any work, saying how to enable it.
#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/python/python_kernels.hpp"

namespace nvfp4 {

bool python_kernels_built() { return false; }

std::string load_python_kernel(const std::string& spec) {
  throw usage_error(fmt::format(
      "--kernel-py {}: this nvfp4bench was built without Python kernels; install pybind11-dev "
      "and python3-dev (scripts/setup --tests does) and rebuild, or configure with "
      "-DNVFP4_PYTHON_KERNELS=ON (docs/python.md)", spec));
}

std::vector<std::string> loaded_python_kernels() { return {}; }

}  // namespace nvfp4
