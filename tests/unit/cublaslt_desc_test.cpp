// The cuBLASLt GEMM configurations (pure functions), the real cuBLASLt descriptors built from
// them (cuBLASLt creates and reads back descriptors without a GPU: checked with cuBLASLt 13.1),
// the availability reasons, and the registry entries of the references and peers. CPU only.
#include <cublasLt.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reference/cublaslt_references.hpp"
#include "src/core/error.hpp"
#include "src/device/cublas_check.hpp"
#include "src/device/cublaslt_config.hpp"
#include "src/device/cublaslt_gemm.hpp"
#include "src/device/device_info.hpp"
#include "src/format/fp8_block_scales.hpp"
#include "src/format/nvfp4.hpp"
#include "src/registry/registry.hpp"
#include "src/registry/resolve.hpp"
#include "src/case/run_case.hpp"

using namespace nvfp4;
using namespace nvfp4::lt;

namespace {

DeviceInfo no_gpu() {
  DeviceInfo d;
  d.has_gpu = false;
  d.no_gpu_reason = "no CUDA device";
  return d;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

int exit_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return -1;
}

}  // namespace

TEST(LtConfig, Nvfp4SwapsOperandsToComputeRowMajorC) {
  const Shape s{128, 7168, 16384, 1};
  const Config c = make_nvfp4_config(s, OutType::F16);
  // C^T (N x M, column-major) = B * A^T: cuBLAS m = N, n = M, k = K.
  EXPECT_EQ(c.m, 7168u);
  EXPECT_EQ(c.n, 128u);
  EXPECT_EQ(c.k, 16384u);
  EXPECT_EQ(c.transa, CUBLAS_OP_T);
  EXPECT_EQ(c.transb, CUBLAS_OP_N);
  EXPECT_EQ(c.compute, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(c.scale_type, CUDA_R_32F);
  // cuBLAS A = our B, stored K x N with ld K (K-major rows of B).
  EXPECT_EQ(c.a.type, CUDA_R_4F_E2M1);
  EXPECT_EQ(c.a.rows, 16384u);
  EXPECT_EQ(c.a.cols, 7168u);
  EXPECT_EQ(c.a.ld, 16384);
  // cuBLAS B = our A, stored K x M.
  EXPECT_EQ(c.b.type, CUDA_R_4F_E2M1);
  EXPECT_EQ(c.b.rows, 16384u);
  EXPECT_EQ(c.b.cols, 128u);
  EXPECT_EQ(c.b.ld, 16384);
  // D = C^T: N x M with ld N, which is row-major C[M, N].
  EXPECT_EQ(c.d.type, CUDA_R_16F);
  EXPECT_EQ(c.d.rows, 7168u);
  EXPECT_EQ(c.d.cols, 128u);
  EXPECT_EQ(c.d.ld, 7168);
  EXPECT_EQ(c.a_scale, ScaleMode::Vec16UE4M3);
  EXPECT_EQ(c.b_scale, ScaleMode::Vec16UE4M3);
  EXPECT_EQ(scale_mode_cublas(ScaleMode::Vec16UE4M3),
            int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3));
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(c.a.batch_count, 1);
  EXPECT_EQ(c.a.min_alignment, 256u);
}

TEST(LtConfig, Nvfp4BatchesLoopWithPerBatchScaleOffsets) {
  // M != N with different padded scale sizes, so a swapped scale stride would show.
  const Shape s{128, 384, 256, 3};
  const Config c = make_nvfp4_config(s, OutType::F16);
  EXPECT_EQ(c.calls, 3);
  for (const MatrixSpec* m : {&c.a, &c.b, &c.d}) EXPECT_EQ(m->batch_count, 1);
  EXPECT_EQ(c.a_call_bytes, 384 * 256 / 2);  // our B
  EXPECT_EQ(c.b_call_bytes, 128 * 256 / 2);  // our A
  EXPECT_EQ(c.d_call_bytes, 128 * 384 * 2);
  EXPECT_EQ(c.a_scale_call_bytes, ScaleLayout::make(384, 256, 1).blocked_bytes_per_batch());
  EXPECT_EQ(c.b_scale_call_bytes, ScaleLayout::make(128, 256, 1).blocked_bytes_per_batch());
  EXPECT_EQ(c.a_scale_call_bytes, 384 * 16);
  EXPECT_EQ(c.b_scale_call_bytes, 128 * 16);
}

TEST(LtConfig, AlignmentFollowsTheBatchOffsets) {
  const Config c = make_nvfp4_config(Shape{1, 8, 32, 2}, OutType::F16);
  EXPECT_EQ(c.a.min_alignment, 128u);  // 8 rows * 16 bytes
  EXPECT_EQ(c.b.min_alignment, 16u);   // 1 row * 16 bytes
  EXPECT_EQ(c.d.min_alignment, 16u);   // 1 * 8 * 2 bytes
}

TEST(LtConfig, OutputTypeIsAParameter) {
  const Shape s{64, 96, 128, 2};
  const Config bf = make_nvfp4_config(s, OutType::BF16);
  EXPECT_EQ(bf.d.type, CUDA_R_16BF);
  EXPECT_EQ(bf.d_call_bytes, 64 * 96 * 2);
  const Config f32 = make_nvfp4_config(s, OutType::F32);
  EXPECT_EQ(f32.d.type, CUDA_R_32F);
  EXPECT_EQ(f32.d_call_bytes, 64 * 96 * 4);
}

TEST(LtConfig, ShapeRulesNameTheRule) {
  EXPECT_EQ(lt_shape_error(Shape{128, 256, 256, 1}, InType::FP4_E2M1, OutType::F16), "");
  const std::string k = lt_shape_error(Shape{128, 256, 48, 1}, InType::FP4_E2M1, OutType::F16);
  EXPECT_TRUE(contains(k, "K must be a multiple of 32")) << k;
  EXPECT_TRUE(contains(k, "48")) << k;
  const std::string n = lt_shape_error(Shape{128, 100, 256, 1}, InType::FP4_E2M1, OutType::F16);
  EXPECT_TRUE(contains(n, "N must be a multiple of 8")) << n;
  // fp32 output rows are 16-byte aligned at N % 4 == 0.
  EXPECT_EQ(lt_shape_error(Shape{128, 100, 256, 1}, InType::FP4_E2M1, OutType::F32), "");
  // FP8 rows need K % 16 only; FP16 GEMMs take any shape.
  EXPECT_EQ(lt_shape_error(Shape{128, 256, 48, 1}, InType::FP8_E4M3, OutType::F16), "");
  EXPECT_EQ(lt_shape_error(Shape{3, 5, 48, 1}, InType::F16, OutType::F16), "");
  EXPECT_EQ(exit_code_of([] {
              (void)make_nvfp4_config(Shape{128, 256, 48, 1}, OutType::F16);
            }),
            kExitBadInput);
}

TEST(LtConfig, DenseBatchesAreOneStridedCall) {
  const Shape s{32, 48, 64, 4};
  const Config c = make_config(s, InType::F16, OutType::F16, ScaleMode::None, ScaleMode::None);
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(c.a.batch_count, 4);
  EXPECT_EQ(c.a.batch_stride, 48 * 64);  // elements of our B
  EXPECT_EQ(c.b.batch_stride, 32 * 64);
  EXPECT_EQ(c.d.batch_stride, 32 * 48);
  EXPECT_EQ(c.a.type, CUDA_R_16F);
  const Config t =
      make_config(s, InType::FP8_E4M3, OutType::F16, ScaleMode::Scalar32F, ScaleMode::Scalar32F);
  EXPECT_EQ(t.calls, 1);  // one scale for every batch: strided
  EXPECT_EQ(t.a.batch_count, 4);
  EXPECT_EQ(t.a.type, CUDA_R_8F_E4M3);
}

TEST(LtConfig, Fp8BlockScalesLoopAtTheirPaddedStride) {
  const Shape s{200, 256, 300 - 300 % 16, 2};  // K = 288: three 128-wide K blocks, the last partial
  const Config c = make_config(s, InType::FP8_E4M3, OutType::F16, ScaleMode::Vec128_32F,
                               ScaleMode::Blk128x128_32F);
  EXPECT_EQ(c.calls, 2);
  EXPECT_EQ(c.b_scale, ScaleMode::Vec128_32F);      // cuBLAS B = our A
  EXPECT_EQ(c.a_scale, ScaleMode::Blk128x128_32F);  // cuBLAS A = our B
  const Fp8BlockScaleLayout la{Fp8BlockKind::Vec128, 200, s.k},
      lb{Fp8BlockKind::Blk128x128, 256, s.k};
  EXPECT_EQ(la.elements(), 3 * 200);
  EXPECT_EQ(lb.elements(), 2 * 4);  // two row blocks x three K blocks padded to four
  EXPECT_EQ(c.b_scale_call_bytes, la.batch_stride() * 4);
  EXPECT_EQ(c.a_scale_call_bytes, lb.batch_stride() * 4);
  EXPECT_EQ(c.b_scale_call_bytes % 256, 0);
  EXPECT_EQ(scale_tensor_bytes(ScaleMode::Vec128_32F, 200, s.k), 2400);
  EXPECT_EQ(scale_tensor_stride(ScaleMode::Vec128_32F, 200, s.k), 2560);
  EXPECT_EQ(scale_tensor_bytes(ScaleMode::Scalar32F, 200, s.k), 4);
  EXPECT_EQ(scale_tensor_bytes(ScaleMode::None, 200, s.k), 0);
}

TEST(Fp8BlockScaleLayout, IndicesAreDistinctAndInRange) {
  for (Fp8BlockKind kind : {Fp8BlockKind::Vec128, Fp8BlockKind::Blk128x128}) {
    const Fp8BlockScaleLayout lay{kind, 300, 300};  // 3 K blocks (one partial), 3 row blocks
    std::set<int64_t> seen;
    for (int64_t r = 0; r < lay.rows; ++r)
      for (int64_t kb = 0; kb < lay.kblocks(); ++kb) {
        const int64_t i = lay.index(r, kb);
        ASSERT_GE(i, 0);
        ASSERT_LT(i, lay.elements());
        seen.insert(i);
        // Rows of one 128-row block share a BLK128x128 scale.
        if (kind == Fp8BlockKind::Blk128x128) {
          EXPECT_EQ(i, lay.index(r / 128 * 128, kb));
        }
      }
    if (kind == Fp8BlockKind::Vec128) {
      EXPECT_EQ(int64_t(seen.size()), lay.elements());  // dense, rows contiguous
      EXPECT_EQ(lay.index(1, 0), 1);
      EXPECT_EQ(lay.index(0, 1), 300);
    } else {
      EXPECT_EQ(int64_t(seen.size()), 3 * 3);  // the fourth K column is padding
      EXPECT_EQ(lay.index(0, 1), 1);
      EXPECT_EQ(lay.index(128, 0), 4);
    }
  }
}

TEST(LtDescriptors, BuildWithoutAGpuAndHoldTheConfig) {
  const Shape s{128, 384, 256, 2};
  const Config c = make_nvfp4_config(s, OutType::F16);
  Descriptors d(c);  // cuBLASLt creates descriptors without a device
  int32_t v = -1;
  size_t written = 0;
  ASSERT_EQ(
      cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_TRANSA, &v, sizeof v, &written),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, int32_t(CUBLAS_OP_T));
  ASSERT_EQ(
      cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_TRANSB, &v, sizeof v, &written),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, int32_t(CUBLAS_OP_N));
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &v, sizeof v,
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3));
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &v, sizeof v,
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(v, int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3));
  int32_t compute = -1;
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                                           sizeof compute, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(compute, int32_t(CUBLAS_COMPUTE_32F));

  // The scale pointers as set (cuBLAS A's = our B's).
  const void* pa = reinterpret_cast<const void*>(uintptr_t(0x10000));
  const void* pb = reinterpret_cast<const void*>(uintptr_t(0x20000));
  d.set_scale_pointers(pa, pb);
  const void* back = nullptr;
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &back,
                                           sizeof back, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, pa);
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &back,
                                           sizeof back, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, pb);

  struct Expect {
    cublasLtMatrixLayout_t l;
    const MatrixSpec& m;
  };
  for (const Expect& e : {Expect{d.a(), c.a}, Expect{d.b(), c.b}, Expect{d.d(), c.d}}) {
    uint32_t type = 0;
    uint64_t rows = 0, cols = 0;
    int64_t ld = 0;
    int32_t batch = 0;
    ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(e.l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type,
                                               &written),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(e.l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows,
                                               &written),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(e.l, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols,
                                               &written),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(
        cublasLtMatrixLayoutGetAttribute(e.l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld, &written),
        CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(e.l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                               sizeof batch, &written),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(type, uint32_t(e.m.type));
    EXPECT_EQ(rows, e.m.rows);
    EXPECT_EQ(cols, e.m.cols);
    EXPECT_EQ(ld, e.m.ld);
    EXPECT_EQ(batch, 1);  // NVFP4 batches are separate calls
  }
}

TEST(LtDescriptors, StridedBatchAttributesReachTheLayouts) {
  const Config c = make_config(Shape{32, 48, 64, 4}, InType::F16, OutType::F16, ScaleMode::None,
                               ScaleMode::None);
  Descriptors d(c);
  int32_t batch = 0;
  int64_t stride = 0;
  size_t written = 0;
  ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(d.d(), CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch, &written),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutGetAttribute(d.d(), CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(batch, 4);
  EXPECT_EQ(stride, 32 * 48);
  // No scale mode is set for a plain FP16 GEMM: the default (scalar) stays.
  int32_t mode = -1;
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(d.op(), CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode,
                                           sizeof mode, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F));
}

TEST(CublasCheck, FailuresBecomeRuntimeErrorsNamingTheCall) {
  EXPECT_EQ(cublas_status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  try {
    NVFP4_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitRuntime);
    EXPECT_TRUE(contains(e.what(), "CUBLAS_STATUS_INVALID_VALUE")) << e.what();
    EXPECT_TRUE(contains(e.what(), "cublaslt_desc_test.cpp")) << e.what();
  }
}

TEST(CublasCheck, HandleWithoutGpuIsARuntimeError) {
  if (query_device(0).has_gpu) GTEST_SKIP() << "this machine has a GPU: cublasLtCreate succeeds";
  try {
    Handle h;
    FAIL() << "cublasLtCreate succeeded without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitRuntime);
    EXPECT_TRUE(contains(e.what(), "cublasLtCreate")) << e.what();
  }
}

TEST(LtAvailability, ComputeCapabilityGateNamesGpuAndCc) {
  const Availability h200 = cc_gate(fake_gpu("NVIDIA H200", 9, 0), 100, 0, "cuBLASLt NVFP4");
  EXPECT_FALSE(h200.ok);
  EXPECT_EQ(h200.reason,
            "cuBLASLt NVFP4 needs compute capability 10.0 or newer; GPU 'NVIDIA H200' has compute "
            "capability 9.0");
  EXPECT_TRUE(cc_gate(fake_gpu("NVIDIA B200", 10, 0), 100, 0, "x").ok);
  EXPECT_TRUE(cc_gate(fake_gpu("NVIDIA B300", 10, 3), 100, 0, "x").ok);
  const Availability hopper_only = cc_gate(fake_gpu("NVIDIA B200", 10, 0), 90, 100, "FP8 block");
  EXPECT_FALSE(hopper_only.ok);
  EXPECT_TRUE(contains(hopper_only.reason, "compute capability 9.x")) << hopper_only.reason;
  EXPECT_TRUE(cc_gate(fake_gpu("NVIDIA H100 80GB HBM3", 9, 0), 90, 100, "FP8 block").ok);
  const Availability none = cc_gate(no_gpu(), 80, 0, "x");
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.reason, "no CUDA device: no CUDA device");
}

// The cuBLASLt NVFP4 reference's gate per compute capability: below 10.0 it refuses, naming
// the GPU; from 10.0 on (10.0 and 10.3 datacenter Blackwell, 11.0, 12.x) the compute capability
// lets it through and cuBLASLt's own heuristic probe on the device decides (docs/kernels.md,
// "Which GPUs run it"). Only the refusals are checked here: the probe needs the GPU.
TEST(LtAvailability, Nvfp4ReferenceGatePerComputeCapability) {
  const auto ref = make_gemm("cublaslt-nvfp4", Role::Reference);
  ASSERT_NE(ref, nullptr);
  for (const DeviceInfo& d : {fake_gpu("NVIDIA H200", 9, 0), fake_gpu("NVIDIA L40S", 8, 9),
                              fake_gpu("NVIDIA A100", 8, 0)}) {
    const Availability a = ref->availability(d);
    EXPECT_FALSE(a.ok) << d.name;
    EXPECT_TRUE(contains(a.reason, "10.0 or newer")) << a.reason;
    EXPECT_TRUE(contains(a.reason, d.name)) << a.reason;
  }
  for (const auto& [major, minor] : {std::pair{10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}})
    EXPECT_TRUE(cc_gate(fake_gpu("Blackwell", major, minor), 100, 0, "cuBLASLt NVFP4").ok)
        << major << "." << minor;
}

TEST(LtAvailability, HeuristicFailuresCarryCublasStatusName) {
  const Availability ns = availability_from_heuristic(CUBLAS_STATUS_NOT_SUPPORTED, 0, "probe");
  EXPECT_FALSE(ns.ok);
  EXPECT_EQ(ns.reason.rfind("cuBLASLt: CUBLAS_STATUS_NOT_SUPPORTED", 0), 0u) << ns.reason;
  const Availability zero = availability_from_heuristic(CUBLAS_STATUS_SUCCESS, 0, "probe");
  EXPECT_FALSE(zero.ok);
  EXPECT_TRUE(contains(zero.reason, "CUBLAS_STATUS_NOT_SUPPORTED")) << zero.reason;
  EXPECT_TRUE(contains(zero.reason, "0 algorithms")) << zero.reason;
  EXPECT_TRUE(contains(availability_from_heuristic(CUBLAS_STATUS_INVALID_VALUE, 0, "p").reason,
                       "CUBLAS_STATUS_INVALID_VALUE"));
  EXPECT_TRUE(availability_from_heuristic(CUBLAS_STATUS_SUCCESS, 1, "probe").ok);
}

TEST(Registry, ReferencesAndPeersAreRegisteredWithTheirRanks) {
  const auto refs = names_of(Role::Reference);
  const auto peers = names_of(Role::Peer);
  for (const auto* list : {&refs, &peers}) {
    const std::set<std::string> unique(list->begin(), list->end());
    EXPECT_EQ(unique.size(), list->size()) << "a name is registered twice in one role";
  }
  const std::pair<const char*, int> ranks[] = {
      {"cublaslt-nvfp4", 3}, {"cublaslt-f16", 2}, {"cpu-exact", 1}};
  for (const auto& [name, rank] : ranks) {
    const auto g = make_gemm(name, Role::Reference);
    ASSERT_TRUE(g) << name;
    EXPECT_EQ(g->auto_rank(), rank) << name;
    EXPECT_EQ(g->role(), Role::Reference);
  }
  const std::pair<const char*, bool> expected_peers[] = {
      {"cublaslt-nvfp4", true}, {"dequant-f16", true}, {"f16-predeq", true},
      {"bf16-predeq", false},   {"fp8-tensor", false}, {"fp8-block", false}};
  for (const auto& [name, same] : expected_peers) {
    const auto g = make_gemm(name, Role::Peer);
    ASSERT_TRUE(g) << name;
    EXPECT_EQ(g->role(), Role::Peer) << name;
    EXPECT_EQ(g->auto_rank(), 0) << name;
    EXPECT_EQ(g->same_numerics(), same) << name;
    EXPECT_EQ(g->workspace_bytes(Shape{128, 256, 256, 1}), kWorkspaceBytes) << name;
  }
  // Plus the sm90 kernel's mainloop alone (tests/unit/sm90_host_test.cpp checks it).
  EXPECT_EQ(peers.size(), std::size(expected_peers) + 1);
}

TEST(Registry, ShapeErrorsOfTheCublasLtImplementations) {
  const auto ref = make_gemm("cublaslt-nvfp4", Role::Reference);
  EXPECT_TRUE(contains(ref->shape_error(Shape{128, 256, 48, 1}), "multiple of 32"));
  EXPECT_EQ(ref->shape_error(Shape{128, 256, 256, 1}), "");
  EXPECT_EQ(make_gemm("cublaslt-f16", Role::Reference)->shape_error(Shape{3, 5, 48, 1}), "");
  EXPECT_TRUE(contains(make_gemm("fp8-tensor", Role::Peer)->shape_error(Shape{128, 100, 256, 1}),
                       "N must be a multiple of 8"));
}

// The one-line message the runner prints (exit 2) when a reference cannot be used.
static std::string resolve_error(const Context& ctx, const std::string& name) {
  try {
    resolve("--reference", name, Role::Reference, Shape{128, 256, 256, 1}, ctx.dev);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "resolved";
}

TEST(Registry, WithoutGpuOnlyTheCpuReferenceIsAvailable) {
  const DeviceInfo none = no_gpu();
  for (Role role : {Role::Reference, Role::Peer})
    for (const auto& name : names_of(role)) {
      const auto av = make_gemm(name, role)->availability(none);
      if (name == "cpu-exact") {
        EXPECT_TRUE(av.ok);
      } else {
        EXPECT_FALSE(av.ok) << name;
        EXPECT_TRUE(contains(av.reason, "no CUDA device")) << name << ": " << av.reason;
      }
    }
  Context ctx;
  ctx.dev = none;
  const std::string msg = resolve_error(ctx, "cublaslt-f16");
  EXPECT_EQ(msg, "--reference 'cublaslt-f16' cannot run on this machine (no CUDA device): no CUDA "
                 "device: no CUDA device; references that can run here: cpu-exact");
  EXPECT_TRUE(contains(resolve_error(ctx, "nope"), "--reference 'nope': unknown reference"));
}

TEST(Registry, UnavailableMessageOnHopperNamesGpuCcAndAlternatives) {
  // cublaslt-nvfp4 is refused by its compute-capability gate before any cuBLASLt call; the
  // other references are probed for real (cpu-exact always runs).
  Context ctx;
  ctx.dev = fake_gpu("NVIDIA H200", 9, 0);
  const std::string msg = resolve_error(ctx, "cublaslt-nvfp4");
  EXPECT_EQ(msg.rfind("--reference 'cublaslt-nvfp4' cannot run on GPU 'NVIDIA H200' (compute "
                      "capability 9.0): cuBLASLt NVFP4 (block-scaled FP4 GEMM) needs compute "
                      "capability 10.0 or newer; GPU 'NVIDIA H200' has compute capability 9.0; "
                      "references that can run here: ",
                      0),
            0u)
      << msg;
  EXPECT_EQ(msg.substr(msg.size() - 9), "cpu-exact") << msg;
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 0);
}

TEST(LtPlan, DescribesInTheToolsTermsAndRefusesToRunUnprepared) {
  EXPECT_EQ(describe(make_nvfp4_config(Shape{128, 384, 256, 2}, OutType::F16)),
            "NVFP4 GEMM M=128 N=384 K=256 L=2 (one call per batch), fp16 output, scales "
            "A:VEC16_UE4M3 B:VEC16_UE4M3");
  EXPECT_EQ(describe(make_config(Shape{64, 32, 128, 1}, InType::FP8_E4M3, OutType::BF16,
                                 ScaleMode::Vec128_32F, ScaleMode::Blk128x128_32F)),
            "FP8 E4M3 GEMM M=64 N=32 K=128, bf16 output, scales A:VEC128_32F B:BLK128x128_32F");
  Plan plan;
  EXPECT_FALSE(plan.ready());
  EXPECT_EQ(exit_code_of([&] { plan.run(Pointers{}, nullptr, 0, nullptr); }), kExitRuntime);
}

// Review finding: the NVFP4 reference's minimum-alignment preferences come from the pointers
// it is given, not only from the configuration (which assumes cudaMalloc'd buffers).
TEST(LtConfig, Nvfp4AlignmentFollowsThePointers) {
  EXPECT_EQ(pointer_alignment(nullptr), 256u);
  EXPECT_EQ(pointer_alignment(reinterpret_cast<const void*>(0x1000)), 256u);
  EXPECT_EQ(pointer_alignment(reinterpret_cast<const void*>(0x1010)), 16u);
  EXPECT_EQ(pointer_alignment(reinterpret_cast<const void*>(0x1002)), 2u);
  const lt::Config base = lt::make_nvfp4_config({128, 256, 256, 1}, lt::OutType::F16);
  ASSERT_EQ(base.a.min_alignment, 256u);
  Operands ops;
  ops.a = reinterpret_cast<const uint8_t*>(0x2040);  // our A = cuBLAS B: 64-byte aligned
  ops.b = reinterpret_cast<const uint8_t*>(0x3020);  // our B = cuBLAS A: 32
  ops.c = reinterpret_cast<uint16_t*>(0x4010);       // D: 16
  const lt::Config c = with_pointer_alignment(base, ops);
  EXPECT_EQ(c.a.min_alignment, 32u);
  EXPECT_EQ(c.b.min_alignment, 64u);
  EXPECT_EQ(c.d.min_alignment, 16u);
  // Never raised above what the configuration's batch strides allow.
  const lt::Config batched = lt::make_nvfp4_config({1, 32, 256, 3}, lt::OutType::F16);
  Operands aligned;
  aligned.a = aligned.b = reinterpret_cast<const uint8_t*>(0x10000);
  aligned.c = reinterpret_cast<uint16_t*>(0x10000);
  const lt::Config cb = with_pointer_alignment(batched, aligned);
  EXPECT_EQ(cb.b.min_alignment, batched.b.min_alignment);
  EXPECT_LT(cb.b.min_alignment, 256u);
}
