// Kernels written in Python (--kernel-py FILE.py[:FUNCTION], docs/python.md): GPU MODE
// nvfp4_gemm submissions run as they are, in an embedded CPython interpreter. Each is registered
// as a Gemm (role kernel) named py:STEM (py:STEM:FUNCTION for a function other than
// custom_kernel). Built only with pybind11 and the Python development files
// (NVFP4_PYTHON_KERNELS); otherwise every load is refused, saying how to enable it.
#pragma once

#include <string>
#include <vector>

namespace nvfp4 {

// Whether this build embeds Python (CMake option NVFP4_PYTHON_KERNELS).
bool python_kernels_built();

// Loads FILE.py (importing it runs its top level) and registers FUNCTION (default
// custom_kernel); returns the kernel's name. A file that does not exist or does not import, a
// missing or non-callable function, a name already taken, or a build without Python is a
// usage_error (exit 2) naming the file and the function. Call before any case runs. Loading the
// same file and function again registers nothing and returns the same name.
std::string load_python_kernel(const std::string& spec);

// The specs loaded so far as "ABSOLUTE_PATH:FUNCTION", in order: what a sweep passes on
// (--kernel-py) to its child processes.
std::vector<std::string> loaded_python_kernels();

}  // namespace nvfp4
