#include "src/device/cublas_check.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

namespace nvfp4 {

std::string cublas_status_name(cublasStatus_t status) {
  const char* name = cublasLtGetStatusName(status);
  return name ? std::string(name) : fmt::format("cublasStatus {}", int(status));
}

void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  const std::string where = fmt::format("{} ({}:{})", expr, file, line);
  const char* what = cublasLtGetStatusString(status);
  throw runtime_error(fmt::format("cuBLAS error {} ({}): {}", cublas_status_name(status),
                                  what ? what : "no description", where));
}

}  // namespace nvfp4
