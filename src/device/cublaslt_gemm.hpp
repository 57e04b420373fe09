// cuBLASLt GEMMs from a lt::Config: RAII descriptors (these need no GPU), the handle, the
// heuristic query (its failure is a reason, never a crash) and the run with the batch loop.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "src/device/cublaslt_config.hpp"

namespace nvfp4::lt {

// 32 MiB, as NVIDIA's LtNvfp4Matmul sample; the workspace must be 256-byte aligned.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

class Handle {
 public:
  Handle();  // needs a GPU: cublasLtCreate answers NOT_INITIALIZED without one
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

// The matmul descriptor, the A/B/D layouts and the search preference of one Config.
class Descriptors {
 public:
  explicit Descriptors(const Config& c, size_t workspace_bytes = kWorkspaceBytes);
  ~Descriptors();
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  // cuBLAS A's and B's scale pointers (device); ignored for ScaleMode::None.
  void set_scale_pointers(const void* a_scale, const void* b_scale);

  cublasLtMatmulDesc_t op() const { return op_; }
  cublasLtMatrixLayout_t a() const { return a_; }
  cublasLtMatrixLayout_t b() const { return b_; }
  cublasLtMatrixLayout_t d() const { return d_; }
  cublasLtMatmulPreference_t preference() const { return pref_; }
  const Config& config() const { return cfg_; }

 private:
  void release();
  Config cfg_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
};

struct HeuristicResult {
  cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
  int count = 0;
  cublasLtMatmulHeuristicResult_t best{};
  bool ok() const { return status == CUBLAS_STATUS_SUCCESS && count > 0; }
};

// Asks for the best algorithm; NOT_SUPPORTED and friends come back in `status`, unthrown.
HeuristicResult query_heuristic(cublasLtHandle_t h, const Descriptors& d);

// The operands in OUR names; run() maps them onto cuBLAS's swapped A/B.
struct Pointers {
  const void* a = nullptr;  // our A
  const void* b = nullptr;  // our B
  const void* a_scale =
      nullptr;  // our A's scales (device), per-batch tensors at the config's stride
  const void* b_scale = nullptr;  // our B's scales
  void* c = nullptr;              // our C
};

// One GEMM ready to run: handle, descriptors and the heuristic's best algorithm.
class Plan {
 public:
  // Empty string when an algorithm was found, else the reason ("cuBLASLt: <STATUS> (...)").
  // `probe` sets the first batch's scale pointers before the query (the heuristic may look at
  // their alignment).
  std::string prepare(const Config& c, const Pointers& probe,
                      size_t workspace_bytes = kWorkspaceBytes);
  bool ready() const { return desc_ != nullptr; }
  const Config& config() const;
  // Enqueues the GEMM (one call, or one per batch) on `stream`. Throws on cuBLAS errors.
  void run(const Pointers& p, void* workspace, size_t workspace_bytes, cudaStream_t stream);

 private:
  std::unique_ptr<Handle> handle_;
  std::unique_ptr<Descriptors> desc_;
  cublasLtMatmulAlgo_t algo_{};
};

// Availability of a config on this device: a handle, tiny device buffers for the scales, and a
// heuristic query. Never throws for "no algorithm": that is the reason.
Availability probe(const Config& c);

}  // namespace nvfp4::lt
