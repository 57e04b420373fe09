// cuBLASLt is loaded on first use, not at start-up: the library is over 500 MB and its static
// initialisers cost ~80 ms per process, which every call without a GPU (--version, --help,
// --list, host runs) would otherwise pay. cublaslt_library.cpp defines the cuBLASLt functions
// the tool calls as forwarders to the library opened with dlopen, so every call site and test
// uses the ordinary cublasLt* API; a function used but not forwarded fails the link.
#pragma once

#include <string>

namespace nvfp4::lt {

// The library's file name, libcublasLt.so.<major of the headers built against>.
const char* library_name();

// Opens the library once (thread-safe): by its name first (LD_LIBRARY_PATH, the executable's
// run path, the system's), then in the CUDA toolkit directory found at configure time. Throws
// runtime_error (exit 3) naming the library and dlopen's reason when neither loads.
void* library();

// Whether library() has succeeded in this process (so whether cuBLASLt was loaded at all).
bool library_loaded();

// dlopen of `name`, then of `fallback_dir`/`name`: the handle, or nullptr with `reason` set to
// what dlopen said (the part library() builds its message from; a test gives it a bad name).
void* open_library(const std::string& name, const std::string& fallback_dir, std::string& reason);

}  // namespace nvfp4::lt
