// Loads user kernels from shared libraries that speak the C ABI of include/nvfp4bench/plugin.h and
// registers each as a Gemm (role kernel) under the plugin's own name.
#pragma once

#include <string>
#include <vector>

namespace nvfp4 {

// dlopens `path`, checks its table and registers every kernel in it; returns their names.
// Every problem (missing file, not a shared object, missing entry symbol, ABI version
// mismatch, a malformed table, a name already taken) is a usage_error (exit 2) naming the path.
// The library stays loaded until the process exits. Call before any case runs. Loading the
// same file again (same absolute path) registers nothing and returns the same names.
std::vector<std::string> load_kernel_library(const std::string& path);

// Absolute paths of the libraries loaded so far, in order: what a parent process passes on
// (--kernel-lib) to the child processes it runs cases in.
std::vector<std::string> loaded_kernel_libraries();

}  // namespace nvfp4
