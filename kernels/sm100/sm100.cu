// `sm100`: NVFP4 GEMM for datacenter Blackwell (sm_100f: compute capability 10.0 and 10.3):
// the kernel's entry point and its host side (tensor maps, schedule, launch). The device code
// is kernels/sm100/kernel.cuh, which the host execution (kernels/sm100/host_model) also runs.
// Compiled for sm_100f only (kernels/sm100/targets.hpp); not yet run on Blackwell hardware:
// bench/notes-sm100.md lists what a first run must check.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "src/device/sm_count.hpp"
#include "src/device/tensor_map.hpp"
#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"
#include "kernels/sm100/descriptors.hpp"
#include "kernels/sm100/kernel.cuh"
#include "src/device/map_cache.hpp"
#include "kernels/sm100/ptx.cuh"
#include "kernels/sm100/schedule.hpp"
#include "kernels/sm100/targets.hpp"

namespace nvfp4 {
namespace sm100 {
namespace {

static_assert(static_cast<int>(TmaDataType::U8) == CU_TENSOR_MAP_DATA_TYPE_UINT8, "enum drift");
static_assert(static_cast<int>(TmaDataType::U32) == CU_TENSOR_MAP_DATA_TYPE_UINT32, "enum drift");
static_assert(static_cast<int>(TmaSwizzle::None) == CU_TENSOR_MAP_SWIZZLE_NONE, "enum drift");
static_assert(static_cast<int>(TmaSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B, "enum drift");

__global__ void __launch_bounds__(kThreads, 1)
    nvfp4_gemm_sm100_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_sfa,
                            const __grid_constant__ CUtensorMap map_sfb, const KernelArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && \
    __CUDA_ARCH_FAMILY_SPECIFIC__ == 1000
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  gemm_cta(smem_raw, &map_a, &map_b, &map_sfa, &map_sfb, args);
#else
  // Built for sm_100f only (CMake target nvfp4_sm100); any other device pass must not run it.
  __trap();
#endif
}

// ---- host -----------------------------------------------------------------------------------

// The tool's one tensor-map encoder (src/device/tensor_map.hpp), after the descriptor's own
// checks, which name the broken rule before the driver's bare CUDA_ERROR_INVALID_VALUE.
CUtensorMap encode_map(const TensorMapParams& p, const void* base, const char* what) {
  if (const char* err = p.check())
    throw runtime_error(fmt::format("sm100: tensor map of {}: {}", what, err));
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    throw runtime_error(fmt::format("sm100: {} must be 16-byte aligned for TMA", what));
  TensorMapSpec spec;
  spec.dtype = static_cast<CUtensorMapDataType>(p.dtype);
  spec.rank = p.rank;
  for (int i = 0; i < 5; ++i) {
    spec.dims[i] = p.dims[i];
    spec.box[i] = p.box[i];
    spec.elem_strides[i] = p.elem_strides[i];
  }
  for (int i = 0; i < 4; ++i) spec.strides_bytes[i] = p.strides_bytes[i];
  spec.swizzle = static_cast<CUtensorMapSwizzle>(p.swizzle);
  spec.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  return encode_tensor_map(spec, base, std::string("sm100 ") + what);
}

// The current device's SM count (src/device/sm_count.hpp); without a usable device (shape
// queries on a machine that cannot run the kernel anyway) a B200's 148, so workspace_bytes()
// still answers.
int current_sm_count() {
  constexpr int kB200Sms = 148;
  const int n = device_sm_count();
  return n > 0 ? n : kB200Sms;
}

class Sm100Gemm final : public Gemm {
 public:
  std::string name() const override { return "sm100"; }
  std::string description() const override {
    return "Blackwell sm_100f: TMA + tcgen05.mma kind::mxf4nvf4 block16 (UE4M3 per 16, scales in TMEM), "
           "warp-specialized persistent, split-K for few tiles (B200/GB200/B300/GB300)";
  }
  Availability availability(const DeviceInfo& dev) const override {
    if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
    if (!code_runs_on(dev.cc_major, dev.cc_minor))
      return {false, fmt::format("needs {} ({} code); {} has {}", kTargetGpus, kTargetArch,
                                 dev.name, dev.cc_string())};
    return {true, {}};
  }
  std::string shape_error(const Shape& s) const override {
    if (s.k % kBlockK != 0) return fmt::format("K must be a multiple of {} (the K tile)", kBlockK);
    if (s.n % 32 != 0) return "N must be a multiple of 32 (epilogue stores 32 columns at once)";
    const int64_t tiles = (s.m + kBlockM - 1) / kBlockM * ((s.n + kBlockN - 1) / kBlockN) * s.l;
    if (tiles * kMaxSplits >= (int64_t{1} << 31)) return "too many 128x128 tiles (M/128*N/128*L)";
    // KernelArgs holds M and N as int.
    if (s.m >= (int64_t{1} << 31) || s.n >= (int64_t{1} << 31)) return "M and N must be below 2^31";
    return {};
  }
  size_t workspace_bytes(const Shape& s) const override {
    const WorkPlan p = plan_for(s);
    if (p.splits == 1) return 0;
    return static_cast<size_t>(p.units()) * kBlockM * kBlockN * sizeof(float);
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    check_operands(ops, nullptr);
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(nvfp4_gemm_sm100_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    attribute_set_ = true;
    ensure_counters(plan_for(s), stream);
    ensure_maps(s, ops);
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    check_operands(ops, workspace);  // before any CUDA call
    if (!attribute_set_) prepare(s, ops, stream);
    const WorkPlan plan = plan_for(s);
    if (plan.units() == 0) return;
    ensure_counters(plan, stream);
    const Maps& maps = ensure_maps(s, ops);
    if (plan.splits > 1 && workspace == nullptr)
      throw runtime_error("sm100: split-K needs the workspace_bytes() workspace, got none");
    const KernelArgs args =
        make_kernel_args(plan, s.m, s.n, ops.c, workspace, counters_.get<uint32_t>());
    const int grid = launch_grid(plan, sm_count());
    nvfp4_gemm_sm100_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps.a, maps.b, maps.sfa,
                                                                    maps.sfb, args);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  int auto_rank() const override { return 0; }  // raise once verified on a B200

 private:
  struct Maps {
    CUtensorMap a, b, sfa, sfb;
  };
  // The epilogue stores C and the split-K partials 16 bytes at a time (the tensor maps check
  // A, B and the scales); the tool's buffers are cudaMalloc'd, a plugin's or Python's may not be.
  static void check_operands(const Operands& ops, const void* workspace) {
    auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (misaligned(ops.c))
      throw runtime_error(fmt::format("sm100: C ({}) must be 16-byte aligned: the epilogue "
                                      "writes 16-byte stores",
                                      static_cast<const void*>(ops.c)));
    if (misaligned(workspace))
      throw runtime_error(fmt::format("sm100: the workspace ({}) must be 16-byte aligned",
                                      workspace));
  }

  int sm_count() const {
    if (sm_count_ == 0) sm_count_ = current_sm_count();
    return sm_count_;
  }
  WorkPlan plan_for(const Shape& s) const { return make_plan(s.m, s.n, s.k, s.l, sm_count()); }

  // Split-K arrival counters: zeroed once here, reset by the kernel after each use.
  void ensure_counters(const WorkPlan& p, cudaStream_t stream) {
    const size_t need = static_cast<size_t>(std::max(p.tiles(), 1)) * sizeof(uint32_t);
    if (counters_.bytes() >= need) return;
    counters_ = DeviceBuffer(need);
    NVFP4_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, need, stream));
  }

  // Encoding is host work of a few microseconds per map: done once per shape and operand set
  // (rotate mode cycles through many sets), so back-to-back timed calls do not starve the GPU.
  const Maps& ensure_maps(const Shape& s, const Operands& ops) {
    return maps_.get(MapKey::of(s, ops), [&] {
      const KernelMapParams p = make_kernel_map_params(s.m, s.n, s.k, s.l);
      return Maps{encode_map(p.a, ops.a, "A"), encode_map(p.b, ops.b, "B"),
                  encode_map(p.sfa, ops.sfa_blocked, "blocked SFA"),
                  encode_map(p.sfb, ops.sfb_blocked, "blocked SFB")};
    });
  }

  mutable int sm_count_ = 0;
  bool attribute_set_ = false;
  DeviceBuffer counters_;
  MapCache<Maps> maps_;
};

}  // namespace
}  // namespace sm100

std::unique_ptr<Gemm> make_sm100_gemm() { return std::make_unique<sm100::Sm100Gemm>(); }

}  // namespace nvfp4
