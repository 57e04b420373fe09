#include "src/device/cublaslt_gemm.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cublas_check.hpp"

namespace nvfp4::lt {

namespace {

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v) {
  NVFP4_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v));
}

template <class T>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const T& v) {
  NVFP4_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof v));
}

template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& v) {
  NVFP4_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof v));
}

cublasLtMatrixLayout_t make_layout(const MatrixSpec& m) {
  cublasLtMatrixLayout_t l = nullptr;
  NVFP4_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, m.type, m.rows, m.cols, m.ld));
  try {
    if (m.batch_count > 1) {
      set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(m.batch_count));
      set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(m.batch_stride));
    }
  } catch (...) {
    (void)cublasLtMatrixLayoutDestroy(l);
    throw;
  }
  return l;
}

}  // namespace

Handle::Handle() { NVFP4_CUBLAS_CHECK(cublasLtCreate(&h_)); }
Handle::~Handle() {
  if (h_) (void)cublasLtDestroy(h_);
}

Descriptors::Descriptors(const Config& c, size_t workspace_bytes) : cfg_(c) {
  try {
    NVFP4_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, c.compute, c.scale_type));
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(c.transa));
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(c.transb));
    // Block scale modes are set explicitly: the default (SCALAR_32F) would read a blocked scale
    // buffer as one fp32. D gets no scale attributes (fp16/bf16/fp32 D is not narrow).
    if (c.a_scale != ScaleMode::None)
      set_desc(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, scale_mode_cublas(c.a_scale));
    if (c.b_scale != ScaleMode::None)
      set_desc(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, scale_mode_cublas(c.b_scale));
    a_ = make_layout(c.a);
    b_ = make_layout(c.b);
    d_ = make_layout(c.d);
    NVFP4_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    set_pref(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(workspace_bytes));
    set_pref(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(c.a.min_alignment));
    set_pref(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t(c.b.min_alignment));
    set_pref(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t(c.d.min_alignment));
    set_pref(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t(c.d.min_alignment));
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

Descriptors::~Descriptors() { release(); }

void Descriptors::release() {
  if (pref_) (void)cublasLtMatmulPreferenceDestroy(pref_);
  if (d_) (void)cublasLtMatrixLayoutDestroy(d_);
  if (b_) (void)cublasLtMatrixLayoutDestroy(b_);
  if (a_) (void)cublasLtMatrixLayoutDestroy(a_);
  if (op_) (void)cublasLtMatmulDescDestroy(op_);
  pref_ = nullptr;
  d_ = b_ = a_ = nullptr;
  op_ = nullptr;
}

void Descriptors::set_scale_pointers(const void* a_scale, const void* b_scale) {
  if (cfg_.a_scale != ScaleMode::None) set_desc(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale);
  if (cfg_.b_scale != ScaleMode::None) set_desc(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale);
}

HeuristicResult query_heuristic(cublasLtHandle_t h, const Descriptors& d) {
  HeuristicResult r;
  // C and D share one layout (beta = 0, C = D), which CUDA 13's matching check accepts.
  r.status = cublasLtMatmulAlgoGetHeuristic(h, d.op(), d.a(), d.b(), d.d(), d.d(), d.preference(),
                                            1, &r.best, &r.count);
  if (r.status == CUBLAS_STATUS_SUCCESS && r.count > 0 && r.best.state != CUBLAS_STATUS_SUCCESS)
    r.status = r.best.state;
  return r;
}

namespace {

// cuBLAS A is our B and cuBLAS B is our A (see cublaslt_config.hpp).
struct LtPointers {
  const void *a, *b, *a_scale, *b_scale;
  void* d;
};
LtPointers swap_to_cublas(const Pointers& p) { return {p.b, p.a, p.b_scale, p.a_scale, p.c}; }

const void* advance(const void* p, int64_t bytes) {
  return p ? static_cast<const uint8_t*>(p) + bytes : nullptr;
}

}  // namespace

std::string Plan::prepare(const Config& c, const Pointers& probe, size_t workspace_bytes) {
  desc_.reset();
  if (!handle_) handle_ = std::make_unique<Handle>();
  auto d = std::make_unique<Descriptors>(c, workspace_bytes);
  const LtPointers lp = swap_to_cublas(probe);
  d->set_scale_pointers(lp.a_scale, lp.b_scale);
  const HeuristicResult r = query_heuristic(handle_->get(), *d);
  const Availability av = availability_from_heuristic(r.status, r.count, describe(c));
  if (!av.ok) return av.reason;
  if (r.best.workspaceSize > workspace_bytes)  // cannot happen with MAX_WORKSPACE_BYTES set
    return fmt::format("cuBLASLt: algorithm needs {} workspace bytes, {} offered",
                       r.best.workspaceSize, workspace_bytes);
  algo_ = r.best.algo;
  desc_ = std::move(d);
  return {};
}

const Config& Plan::config() const {
  if (!desc_) throw runtime_error("cuBLASLt plan used before a successful prepare()");
  return desc_->config();
}

void Plan::run(const Pointers& p, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  const Config& c = config();
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    throw runtime_error("cuBLASLt workspace must be 256-byte aligned");
  if (workspace_bytes > 0 && workspace == nullptr)
    throw runtime_error("cuBLASLt workspace pointer is null");
  const LtPointers lp = swap_to_cublas(p);
  const float alpha = 1.0f, beta = 0.0f;  // CUDA_R_32F scale type, host pointer mode
  for (int64_t call = 0; call < c.calls; ++call) {
    const void* a = advance(lp.a, call * c.a_call_bytes);
    const void* b = advance(lp.b, call * c.b_call_bytes);
    void* d = static_cast<uint8_t*>(lp.d) + call * c.d_call_bytes;
    // Scale pointers live in the matmul descriptor; cublasLtMatmul reads it when called, so
    // updating it between enqueued calls is safe.
    desc_->set_scale_pointers(advance(lp.a_scale, call * c.a_scale_call_bytes),
                              advance(lp.b_scale, call * c.b_scale_call_bytes));
    NVFP4_CUBLAS_CHECK(cublasLtMatmul(handle_->get(), desc_->op(), &alpha, a, desc_->a(), b,
                                      desc_->b(), &beta, d, desc_->d(), d, desc_->d(), &algo_,
                                      workspace, workspace_bytes, stream));
  }
}

Availability probe(const Config& c) {
  try {
    // Real (tiny) scale buffers, so the query sees the pointers a run would pass. Our A's
    // scales cover c.n rows (cuBLAS B), our B's c.m rows (cuBLAS A).
    DeviceBuffer our_a_scale(size_t(scale_tensor_stride(c.b_scale, int64_t(c.n), int64_t(c.k))) +
                             256);
    DeviceBuffer our_b_scale(size_t(scale_tensor_stride(c.a_scale, int64_t(c.m), int64_t(c.k))) +
                             256);
    Plan plan;
    const std::string reason =
        plan.prepare(c, Pointers{nullptr, nullptr, our_a_scale.get(), our_b_scale.get(), nullptr});
    return reason.empty() ? Availability{true, {}} : Availability{false, reason};
  } catch (const Error& e) {  // availability answers, it does not throw (no handle, no memory)
    return {false, e.what()};
  }
}

}  // namespace nvfp4::lt
