#include "src/device/cublaslt_library.hpp"

#include <cublasLt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "src/core/error.hpp"

#ifndef NVFP4_CUBLASLT_DIR
#define NVFP4_CUBLASLT_DIR ""
#endif

namespace nvfp4::lt {

namespace {

#define NVFP4_STR2(x) #x
#define NVFP4_STR(x) NVFP4_STR2(x)
constexpr const char* kLibraryName = "libcublasLt.so." NVFP4_STR(CUBLAS_VER_MAJOR);

std::atomic<void*> g_handle{nullptr};

}  // namespace

const char* library_name() { return kLibraryName; }

// The address of `name` in the library (loading it first); throws like library().
void* symbol(const char* name) {
  void* f = dlsym(library(), name);
  if (!f)
    throw runtime_error(fmt::format("cuBLASLt: {} has no symbol {} (the headers the tool was "
                                    "built with are newer than the library)",
                                    kLibraryName, name));
  return f;
}

void* open_library(const std::string& name, const std::string& fallback_dir, std::string& reason) {
  // RTLD_LOCAL: the symbols stay out of the global scope, so a second cuBLASLt (torch's, in a
  // Python kernel) binds to its own.
  if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  const char* err = dlerror();
  reason = err ? err : "unknown dlopen error";
  if (!fallback_dir.empty()) {
    const std::string path = fallback_dir + "/" + name;
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    if (const char* err2 = dlerror()) reason += std::string("; ") + err2;
  }
  return nullptr;
}

void* library() {
  if (void* h = g_handle.load(std::memory_order_acquire)) return h;
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  if (void* h = g_handle.load(std::memory_order_relaxed)) return h;
  std::string reason;
  void* h = open_library(kLibraryName, NVFP4_CUBLASLT_DIR, reason);
  if (!h)
    throw runtime_error(fmt::format(
        "cuBLASLt is needed here but {} cannot be loaded: {} (install the CUDA toolkit's cuBLAS "
        "or add its directory to LD_LIBRARY_PATH)",
        kLibraryName, reason));
  g_handle.store(h, std::memory_order_release);
  return h;
}

bool library_loaded() { return g_handle.load(std::memory_order_acquire) != nullptr; }

}  // namespace nvfp4::lt

// The forwarders: the cuBLASLt API as cublasLt.h declares it (extern "C"), each calling the
// function of the same name in the library. Hidden (CMakeLists.txt compiles this file with
// -fvisibility=hidden) so that no other library in the process binds to them. A failure to load
// throws nvfp4::Error through the caller, like NVFP4_CUBLAS_CHECK would.
// Each looks its function up once (a function-local static; a failed lookup is retried).
#define NVFP4_LT_FORWARD(ret, name, params, args)                                    \
  ret CUBLASWINAPI name params {                                                     \
    static const auto f = reinterpret_cast<decltype(&name)>(nvfp4::lt::symbol(#name)); \
    return f args;                                                                   \
  }

NVFP4_LT_FORWARD(const char*, cublasLtGetStatusName, (cublasStatus_t s), (s))
NVFP4_LT_FORWARD(const char*, cublasLtGetStatusString, (cublasStatus_t s), (s))
NVFP4_LT_FORWARD(size_t, cublasLtGetVersion, (void), ())
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * h), (h))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t h), (h))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulDescCreate,
                 (cublasLtMatmulDesc_t * d, cublasComputeType_t c, cudaDataType_t s), (d, c, s))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulDescSetAttribute,
                 (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* buf,
                  size_t size),
                 (d, a, buf, size))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulDescGetAttribute,
                 (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void* buf, size_t size,
                  size_t* written),
                 (d, a, buf, size, written))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutCreate,
                 (cublasLtMatrixLayout_t * l, cudaDataType t, uint64_t rows, uint64_t cols,
                  int64_t ld),
                 (l, t, rows, cols, ld))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutSetAttribute,
                 (cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, const void* buf,
                  size_t size),
                 (l, a, buf, size))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutGetAttribute,
                 (cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, void* buf,
                  size_t size, size_t* written),
                 (l, a, buf, size, written))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * p),
                 (p))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p),
                 (p))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,
                 (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                  const void* buf, size_t size),
                 (p, a, buf, size))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
                 (cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                  cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                  cublasLtMatmulPreference_t pref, int requested,
                  cublasLtMatmulHeuristicResult_t results[], int* returned),
                 (h, op, a, b, c, d, pref, requested, results, returned))
NVFP4_LT_FORWARD(cublasStatus_t, cublasLtMatmul,
                 (cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void* alpha, const void* a,
                  cublasLtMatrixLayout_t ad, const void* b, cublasLtMatrixLayout_t bd,
                  const void* beta, const void* c, cublasLtMatrixLayout_t cd, void* d,
                  cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t* algo, void* workspace,
                  size_t workspace_bytes, cudaStream_t stream),
                 (h, op, alpha, a, ad, b, bd, beta, c, cd, d, dd, algo, workspace,
                  workspace_bytes, stream))
