// Every cuBLAS/cuBLASLt call goes through NVFP4_CUBLAS_CHECK: a failure becomes nvfp4::Error
// (exit code 3) naming the call, cuBLAS's status name and the call site.
#pragma once

#include <cublas_api.h>

#include <string>

#include "src/core/error.hpp"

namespace nvfp4 {

// "CUBLAS_STATUS_NOT_SUPPORTED" etc. (cublasLtGetStatusName: libcublasLt only, no libcublas).
std::string cublas_status_name(cublasStatus_t status);

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file,
                                     int line);

inline void cublas_check(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, expr, file, line);
}

}  // namespace nvfp4

#define NVFP4_CUBLAS_CHECK(expr) ::nvfp4::cublas_check((expr), #expr, __FILE__, __LINE__)
