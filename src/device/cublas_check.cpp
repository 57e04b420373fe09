#include "src/device/cublas_check.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

namespace nvfp4 {

namespace {

// cuBLASLt's text for `status`, or nullptr where the library cannot be loaded (the status is
// then shown by number: a message about a failure must not fail itself).
const char* lt_text(const char* (*get)(cublasStatus_t), cublasStatus_t status) {
  try {
    return get(status);
  } catch (const Error&) {
    return nullptr;
  }
}

}  // namespace

std::string cublas_status_name(cublasStatus_t status) {
  const char* name = lt_text(cublasLtGetStatusName, status);
  return name ? std::string(name) : fmt::format("cublasStatus {}", int(status));
}

void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  const std::string where = fmt::format("{} ({}:{})", expr, file, line);
  const char* what = lt_text(cublasLtGetStatusString, status);
  throw runtime_error(fmt::format("cuBLAS error {} ({}): {}", cublas_status_name(status),
                                  what ? what : "no description", where));
}

}  // namespace nvfp4
