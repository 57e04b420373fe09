// What one cuBLASLt GEMM of this tool is, as plain data: built by pure functions from the
// problem shape, so the descriptor set-up is unit-tested without a GPU. cublaslt_gemm.hpp turns
// a config into cuBLASLt descriptors and runs it.
//
// Our problem is row-major C[M,N] = A[M,K] * B[N,K]^T with K-major A and B. cuBLAS is
// column-major, so every config computes C^T (N x M, column-major, ld N) = B * A^T:
// cuBLAS's "A" is OUR B (TRANSA = T: stored K x N, ld K) and cuBLAS's "B" is OUR A (TRANSB = N:
// stored K x M, ld K); their scale tensors swap with them (PyTorch's cuBlasCommonArgs does the
// same). This "TN" form is the only one cuBLASLt offers for FP4 and FP8.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>
#include <string>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

struct DeviceInfo;

namespace lt {

// Output element type. The tool writes fp16 today; bf16 and fp32 are one enum value away.
enum class OutType { F16, BF16, F32 };
const char* out_type_name(OutType t);
int64_t out_type_bytes(OutType t);
cudaDataType_t out_cuda_type(OutType t);

// Operand element type (both operands share it).
enum class InType { FP4_E2M1, FP8_E4M3, F16, BF16 };
const char* in_type_name(InType t);
cudaDataType_t in_cuda_type(InType t);
// Bytes of `elements` elements (FP4: two per byte; callers keep `elements` even).
int64_t in_type_bytes(InType t, int64_t elements);

// How an operand is scaled (cublasLtMatmulMatrixScale_t, or no scale at all).
enum class ScaleMode {
  None,            // no scale pointer: plain FP16/BF16 GEMM
  Scalar32F,       // one fp32 per tensor (FP8 per-tensor scaling)
  Vec16UE4M3,      // NVFP4: one UE4M3 per 16 K elements, 128x4 blocked layout
  Vec128_32F,      // one fp32 per 128 K elements of each row (Hopper block-scaled FP8)
  Blk128x128_32F,  // one fp32 per 128x128 tile (Hopper block-scaled FP8)
};
const char* scale_mode_name(ScaleMode m);
// The cublasLtMatmulMatrixScale_t value; only valid for modes other than None.
int32_t scale_mode_cublas(ScaleMode m);
// Whether the scales form a tensor per batch (then cuBLASLt cannot stride them: see Config).
bool scale_is_per_batch_tensor(ScaleMode m);

// One matrix as cuBLASLt sees it: column-major storage of rows x cols elements.
struct MatrixSpec {
  cudaDataType_t type = CUDA_R_16F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;                // elements
  int32_t batch_count = 1;       // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT (set only when > 1)
  int64_t batch_stride = 0;      // elements, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET
  uint32_t min_alignment = 256;  // bytes every pointer we pass for it is aligned to
};

struct Config {
  std::string what;  // "NVFP4", "FP16", ... for messages
  InType in = InType::F16;
  OutType out = OutType::F16;
  // cuBLAS-side problem: D (m x n) = op(A) (m x k) * op(B) (k x n); m = N, n = M, k = K.
  uint64_t m = 0, n = 0, k = 0;
  cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;  // alpha/beta type (host pointers, alpha 1, beta 0)
  MatrixSpec a;                            // cuBLAS A = OUR B
  MatrixSpec b;                            // cuBLAS B = OUR A
  MatrixSpec d;  // C and D (one descriptor: C = D, beta = 0): OUR C transposed
  ScaleMode a_scale = ScaleMode::None;  // cuBLAS A's scale = OUR B's scales
  ScaleMode b_scale = ScaleMode::None;  // cuBLAS B's scale = OUR A's scales
  // cuBLASLt strides A/B/D across a batch (layout attributes) but has no batch stride for the
  // scale pointers (matmul-descriptor attributes). So when the scales are per-batch tensors the
  // batch is ONE cublasLtMatmul call per batch with advanced pointers; else one strided call.
  int64_t calls = 1;
  // Byte offsets between consecutive calls (all 0 when calls == 1).
  int64_t a_call_bytes = 0, b_call_bytes = 0, d_call_bytes = 0;
  int64_t a_scale_call_bytes = 0, b_scale_call_bytes = 0;
};

// The general builder: operands of `in` type, OUR A scaled by `our_a_scale`, OUR B by
// `our_b_scale`. Throws usage_error for a shape that lt_shape_error rejects.
Config make_config(const Shape& s, InType in, OutType out, ScaleMode our_a_scale,
                   ScaleMode our_b_scale);
// cuBLASLt NVFP4: E2M1 A/B, VEC16_UE4M3 scales (the blocked buffers), one call per batch.
Config make_nvfp4_config(const Shape& s, OutType out);

// Bytes of one batch's scale tensor for a tensor of `rows` rows and K columns, as cuBLASLt
// reads it (VEC16: the 128x4 blocked layout; VEC128: ceil(K/128) x rows, rows contiguous;
// BLK128x128: ceil(rows/128) x roundup(ceil(K/128), 4), K blocks contiguous, see
// format/fp8_block_scales.hpp; Scalar: 4; None: 0).
int64_t scale_tensor_bytes(ScaleMode m, int64_t rows, int64_t k);
// The per-batch stride we store scale tensors at: scale_tensor_bytes rounded up to 256 bytes,
// so every batch's scale pointer keeps cuBLASLt's default 256-byte alignment.
int64_t scale_tensor_stride(ScaleMode m, int64_t rows, int64_t k);

// The shape rules cuBLASLt imposes on this operand/output type, as one message naming the
// rule, or "" when the shape is fine. (16-byte alignment of rows for FP4/FP8: K-major FP4
// rows need K % 32 == 0; output rows N * sizeof(out) % 16 == 0.)
std::string lt_shape_error(const Shape& s, InType in, OutType out);

// Availability from the compute capability alone: ok when min_cc <= cc < max_cc (max_cc 0:
// no upper bound); else a reason naming the GPU, its cc and what needs it.
Availability cc_gate(const DeviceInfo& dev, int min_cc, int max_cc, const std::string& what);
// Availability from a heuristic query: ok when status is success and an algorithm came back;
// else "cuBLASLt: <STATUS NAME> (<context>)".
Availability availability_from_heuristic(cublasStatus_t status, int algo_count,
                                         const std::string& context);

// "NVFP4 GEMM M=.. N=.. K=.., fp16 output, scales A:.. B:.." (our A/B) for messages.
std::string describe(const Config& c);

}  // namespace lt
}  // namespace nvfp4
