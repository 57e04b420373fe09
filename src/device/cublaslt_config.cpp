#include "src/device/cublaslt_config.hpp"

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/device/cublas_check.hpp"
#include "src/device/device_info.hpp"
#include "src/format/fp8_block_scales.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4::lt {

const char* out_type_name(OutType t) {
  switch (t) {
    case OutType::F16: return "fp16";
    case OutType::BF16: return "bf16";
    case OutType::F32: return "fp32";
  }
  return "?";
}

int64_t out_type_bytes(OutType t) { return t == OutType::F32 ? 4 : 2; }

cudaDataType_t out_cuda_type(OutType t) {
  switch (t) {
    case OutType::F16: return CUDA_R_16F;
    case OutType::BF16: return CUDA_R_16BF;
    case OutType::F32: return CUDA_R_32F;
  }
  return CUDA_R_16F;
}

const char* in_type_name(InType t) {
  switch (t) {
    case InType::FP4_E2M1: return "NVFP4";
    case InType::FP8_E4M3: return "FP8 E4M3";
    case InType::F16: return "FP16";
    case InType::BF16: return "BF16";
  }
  return "?";
}

cudaDataType_t in_cuda_type(InType t) {
  switch (t) {
    case InType::FP4_E2M1: return CUDA_R_4F_E2M1;
    case InType::FP8_E4M3: return CUDA_R_8F_E4M3;
    case InType::F16: return CUDA_R_16F;
    case InType::BF16: return CUDA_R_16BF;
  }
  return CUDA_R_16F;
}

int64_t in_type_bytes(InType t, int64_t elements) {
  switch (t) {
    case InType::FP4_E2M1: return elements / 2;
    case InType::FP8_E4M3: return elements;
    case InType::F16:
    case InType::BF16: return elements * 2;
  }
  return 0;
}

const char* scale_mode_name(ScaleMode m) {
  switch (m) {
    case ScaleMode::None: return "none";
    case ScaleMode::Scalar32F: return "SCALAR_32F";
    case ScaleMode::Vec16UE4M3: return "VEC16_UE4M3";
    case ScaleMode::Vec128_32F: return "VEC128_32F";
    case ScaleMode::Blk128x128_32F: return "BLK128x128_32F";
  }
  return "?";
}

int32_t scale_mode_cublas(ScaleMode m) {
  switch (m) {
    case ScaleMode::None:
    case ScaleMode::Scalar32F: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case ScaleMode::Vec16UE4M3: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    case ScaleMode::Vec128_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleMode::Blk128x128_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
  return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

bool scale_is_per_batch_tensor(ScaleMode m) {
  return m == ScaleMode::Vec16UE4M3 || m == ScaleMode::Vec128_32F || m == ScaleMode::Blk128x128_32F;
}

int64_t scale_tensor_bytes(ScaleMode m, int64_t rows, int64_t k) {
  switch (m) {
    case ScaleMode::None: return 0;
    case ScaleMode::Scalar32F: return 4;
    case ScaleMode::Vec16UE4M3: return ScaleLayout::make(rows, k, 1).blocked_bytes_per_batch();
    case ScaleMode::Vec128_32F:
      return 4 * Fp8BlockScaleLayout{Fp8BlockKind::Vec128, rows, k}.elements();
    case ScaleMode::Blk128x128_32F:
      return 4 * Fp8BlockScaleLayout{Fp8BlockKind::Blk128x128, rows, k}.elements();
  }
  return 0;
}

int64_t scale_tensor_stride(ScaleMode m, int64_t rows, int64_t k) {
  // The VEC16 blocked buffers of Operands are already multiples of 512 bytes per batch, so for
  // them this is exactly their batch stride.
  return (scale_tensor_bytes(m, rows, k) + 255) / 256 * 256;
}

namespace {

bool narrow(InType t) { return t == InType::FP4_E2M1 || t == InType::FP8_E4M3; }

// Largest power of two <= 256 dividing every multiple of `stride_bytes` (256 when there is
// only one pointer: cudaMalloc'd buffers are 256-byte aligned).
uint32_t alignment_of_stride(int64_t stride_bytes) {
  if (stride_bytes <= 0) return 256;
  uint32_t a = 1;
  while (a < 256 && stride_bytes % (2 * int64_t(a)) == 0) a *= 2;
  return a;
}

}  // namespace

std::string lt_shape_error(const Shape& s, InType in, OutType out) {
  if (in == InType::FP4_E2M1 && s.k % 32 != 0)
    return fmt::format(
        "K must be a multiple of 32 for cuBLASLt NVFP4 (16-byte aligned K-major FP4 rows), got {}",
        s.k);
  if (in == InType::FP8_E4M3 && s.k % 16 != 0)
    return fmt::format(
        "K must be a multiple of 16 for cuBLASLt FP8 (16-byte aligned K-major FP8 rows), got {}",
        s.k);
  if (narrow(in) && (s.n * out_type_bytes(out)) % 16 != 0)
    return fmt::format(
        "N must be a multiple of {} for cuBLASLt {} with {} output (16-byte aligned output rows), "
        "got {}",
        16 / out_type_bytes(out), in_type_name(in), out_type_name(out), s.n);
  if (s.l > INT32_MAX)
    return fmt::format("L must be at most {} for cuBLASLt, got {}", INT32_MAX, s.l);
  return {};
}

Config make_config(const Shape& s, InType in, OutType out, ScaleMode our_a_scale,
                   ScaleMode our_b_scale) {
  if (const std::string err = lt_shape_error(s, in, out); !err.empty()) throw usage_error(err);
  Config c;
  c.what = in_type_name(in);
  c.in = in;
  c.out = out;
  c.m = uint64_t(s.n);
  c.n = uint64_t(s.m);
  c.k = uint64_t(s.k);
  c.transa = CUBLAS_OP_T;  // cuBLAS A (our B) stored K x N: op T gives N x K
  c.transb = CUBLAS_OP_N;  // cuBLAS B (our A) stored K x M
  c.compute = CUBLAS_COMPUTE_32F;
  c.scale_type = CUDA_R_32F;
  c.a_scale = our_b_scale;
  c.b_scale = our_a_scale;

  const cudaDataType_t t = in_cuda_type(in);
  c.a = MatrixSpec{t, uint64_t(s.k), uint64_t(s.n), s.k};
  c.b = MatrixSpec{t, uint64_t(s.k), uint64_t(s.m), s.k};
  c.d = MatrixSpec{out_cuda_type(out), uint64_t(s.n), uint64_t(s.m), s.n};

  const int64_t a_batch_bytes = in_type_bytes(in, s.n * s.k);
  const int64_t b_batch_bytes = in_type_bytes(in, s.m * s.k);
  const int64_t d_batch_bytes = s.m * s.n * out_type_bytes(out);
  const bool loop =
      scale_is_per_batch_tensor(our_a_scale) || scale_is_per_batch_tensor(our_b_scale);
  if (s.l > 1 && loop) {
    c.calls = s.l;
    c.a_call_bytes = a_batch_bytes;
    c.b_call_bytes = b_batch_bytes;
    c.d_call_bytes = d_batch_bytes;
    c.a_scale_call_bytes = scale_tensor_stride(c.a_scale, s.n, s.k);
    c.b_scale_call_bytes = scale_tensor_stride(c.b_scale, s.m, s.k);
  } else if (s.l > 1) {
    c.a.batch_count = c.b.batch_count = c.d.batch_count = int32_t(s.l);
    c.a.batch_stride = s.n * s.k;  // elements
    c.b.batch_stride = s.m * s.k;
    c.d.batch_stride = s.m * s.n;
  }
  // Each batch's matrix starts at base + batch * per-batch bytes (looped or strided alike).
  if (s.l > 1) {
    c.a.min_alignment = alignment_of_stride(a_batch_bytes);
    c.b.min_alignment = alignment_of_stride(b_batch_bytes);
    c.d.min_alignment = alignment_of_stride(d_batch_bytes);
  }
  return c;
}

Config make_nvfp4_config(const Shape& s, OutType out) {
  return make_config(s, InType::FP4_E2M1, out, ScaleMode::Vec16UE4M3, ScaleMode::Vec16UE4M3);
}

Availability cc_gate(const DeviceInfo& dev, int min_cc, int max_cc, const std::string& what) {
  if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
  const int cc = dev.cc();
  auto cc_text = [](int v) { return fmt::format("{}.{}", v / 10, v % 10); };
  if (cc < min_cc || (max_cc > 0 && cc >= max_cc)) {
    const std::string need =
        max_cc > 0 && max_cc == (min_cc / 10 + 1) * 10
            ? fmt::format("compute capability {}.x", min_cc / 10)
        : max_cc > 0
            ? fmt::format("compute capability {} up to below {}", cc_text(min_cc), cc_text(max_cc))
            : fmt::format("compute capability {} or newer", cc_text(min_cc));
    return {false, fmt::format("{} needs {}; GPU '{}' has compute capability {}", what, need,
                               dev.name, dev.cc_string())};
  }
  return {true, {}};
}

Availability availability_from_heuristic(cublasStatus_t status, int algo_count,
                                         const std::string& context) {
  if (status == CUBLAS_STATUS_SUCCESS && algo_count > 0) return {true, {}};
  // cuBLASLt reports "no algorithm" either as NOT_SUPPORTED or as success with 0 results.
  const cublasStatus_t shown =
      status == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_NOT_SUPPORTED : status;
  return {false,
          fmt::format("cuBLASLt: {} ({}{})", cublas_status_name(shown), context,
                      status == CUBLAS_STATUS_SUCCESS ? "; heuristic returned 0 algorithms" : "")};
}

std::string describe(const Config& c) {
  // In the tool's terms (M, N = cuBLAS n, m).
  return fmt::format("{} GEMM M={} N={} K={}{}, {} output, scales A:{} B:{}", c.what, c.n, c.m, c.k,
                     c.calls > 1           ? fmt::format(" L={} (one call per batch)", c.calls)
                     : c.d.batch_count > 1 ? fmt::format(" L={}", c.d.batch_count)
                                           : std::string(),
                     out_type_name(c.out), scale_mode_name(c.b_scale), scale_mode_name(c.a_scale));
}

}  // namespace nvfp4::lt
