// `sm100`: NVFP4 GEMM for Blackwell (sm_100a, compute capability 10.0).
//
// Pipeline per CTA (192 threads, persistent over a static list of work units):
//   warp 0, one thread   TMA producer: per K tile of 256, loads A and B boxes (128 rows x 128
//                        bytes, 128B swizzle) and the 2 KiB of blocked scales of each into a
//                        ring of kStages shared-memory stages (mbarrier full/empty pairs).
//   warp 1, one thread   MMA issuer: copies the stage's scale atoms to tensor memory
//                        (tcgen05.cp 32x128b.warpx4), issues 4 tcgen05.mma kind::mxf4nvf4
//                        block16 (K = 64 each) into a TMEM accumulator, and commits to free
//                        the stage; two accumulators alternate between work units.
//   warps 2-5            epilogue: tcgen05.ld the accumulator (each warp its 32-lane quarter),
//                        convert to fp16 and store; for split-K, store FP32 partials and let the
//                        last CTA of a tile sum them in split order (deterministic).
// Compiled for sm_100a only; NOT RUN on hardware by its author (no Blackwell GPU was available):
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

#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"
#include "kernels/sm100/descriptors.hpp"
#include "kernels/sm100/ptx.cuh"
#include "kernels/sm100/schedule.hpp"

namespace nvfp4 {
namespace sm100 {
namespace {

static_assert(static_cast<int>(TmaDataType::U8) == CU_TENSOR_MAP_DATA_TYPE_UINT8, "enum drift");
static_assert(static_cast<int>(TmaDataType::U32) == CU_TENSOR_MAP_DATA_TYPE_UINT32, "enum drift");
static_assert(static_cast<int>(TmaSwizzle::None) == CU_TENSOR_MAP_SWIZZLE_NONE, "enum drift");
static_assert(static_cast<int>(TmaSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B, "enum drift");

struct KernelArgs {
  uint16_t* c = nullptr;         // [L, M, N] fp16
  float* partials = nullptr;     // [tiles * splits][kBlockM][kBlockN] FP32, split-K only
  uint32_t* counters = nullptr;  // [tiles] arrivals per tile; the last CTA resets it to 0
  WorkPlan plan;
  int m = 0, n = 0;
};

// Where each piece lives in the (1024-byte aligned) dynamic shared memory.
struct SmemLayout {
  uint8_t* base;
  __device__ uint8_t* a(int s) const { return base + s * kAStageBytes; }
  __device__ uint8_t* b(int s) const { return base + kStages * kAStageBytes + s * kBStageBytes; }
  __device__ uint8_t* sfa(int s) const {
    return base + kStages * (kAStageBytes + kBStageBytes) + s * kSfStageBytes;
  }
  __device__ uint8_t* sfb(int s) const {
    return base + kStages * (kAStageBytes + kBStageBytes + kSfStageBytes) + s * kSfStageBytes;
  }
  __device__ uint64_t* bars() const {
    return reinterpret_cast<uint64_t*>(base + kStages * kStageBytes);
  }
  __device__ uint64_t* full(int s) const { return bars() + s; }                    // TMA -> MMA
  __device__ uint64_t* empty(int s) const { return bars() + kStages + s; }         // MMA -> TMA
  __device__ uint64_t* acc_full(int b) const { return bars() + 2 * kStages + b; }  // MMA -> epi
  __device__ uint64_t* acc_empty(int b) const { return bars() + 2 * kStages + kAccBuffers + b; }
  __device__ uint32_t* tmem_slot() const {
    return reinterpret_cast<uint32_t*>(bars() + 2 * kStages + 2 * kAccBuffers);
  }
  __device__ volatile uint32_t* last_flag() const { return tmem_slot() + 1; }
};

// Watchdog site numbers printed when a wait times out.
enum WaitSite : int { kWaitEmpty = 1, kWaitAccEmpty = 2, kWaitFull = 3, kWaitAccFull = 4 };

__device__ __forceinline__ uint32_t fp16_pair(float lo, float hi) {
  return static_cast<uint32_t>(__half_as_ushort(__float2half_rn(lo))) |
         (static_cast<uint32_t>(__half_as_ushort(__float2half_rn(hi))) << 16);
}

// 32 consecutive outputs of one row: four 16-byte stores (N % 32 == 0 keeps them aligned).
__device__ __forceinline__ void store_fp16x32(uint16_t* dst, const float (&v)[32]) {
  uint4* d = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int q = 0; q < 4; ++q)
    d[q] = make_uint4(fp16_pair(v[8 * q + 0], v[8 * q + 1]), fp16_pair(v[8 * q + 2], v[8 * q + 3]),
                      fp16_pair(v[8 * q + 4], v[8 * q + 5]), fp16_pair(v[8 * q + 6], v[8 * q + 7]));
}

__device__ __forceinline__ float* partial_ptr(const KernelArgs& args, const WorkUnit& w, int split,
                                              int row_in_tile, int col_in_tile) {
  const int64_t slab = static_cast<int64_t>(w.tile) * args.plan.splits + split;
  return args.partials + (slab * kBlockM + row_in_tile) * kBlockN + col_in_tile;
}

__device__ void run_producer(const SmemLayout& sm, const KernelArgs& args, const CUtensorMap* map_a,
                             const CUtensorMap* map_b, const CUtensorMap* map_sfa,
                             const CUtensorMap* map_sfb) {
  const WorkPlan& plan = args.plan;
  int stage = 0;
  uint32_t phase = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x) {
    const WorkUnit w = decode_unit(plan, u);
    for (int kt = w.k_begin; kt < w.k_end; ++kt) {
      // A fresh barrier counts as having completed the phase before phase 0: the first pass
      // over the ring does not wait.
      ptx::mbar_wait(sm.empty(stage), phase ^ 1u, kWaitEmpty);
      ptx::mbar_arrive_expect_tx(sm.full(stage), kStageBytes);
      ptx::tma_load_3d(sm.a(stage), map_a, sm.full(stage), kt * kBlockKBytes, w.m_tile * kBlockM,
                       w.batch);
      ptx::tma_load_3d(sm.b(stage), map_b, sm.full(stage), kt * kBlockKBytes, w.n_tile * kBlockN,
                       w.batch);
      // Scale maps index 128-row blocks of all batches in their outermost dimension.
      ptx::tma_load_3d(sm.sfa(stage), map_sfa, sm.full(stage), 0, kt * kMmasPerStage,
                       w.batch * plan.m_tiles + w.m_tile);
      ptx::tma_load_3d(sm.sfb(stage), map_sfb, sm.full(stage), 0, kt * kMmasPerStage,
                       w.batch * plan.n_tiles + w.n_tile);
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

__device__ void run_mma_issuer(const SmemLayout& sm, const KernelArgs& args, uint32_t tmem_base) {
  const WorkPlan& plan = args.plan;
  const uint32_t idesc = make_nvfp4_instr_desc(kBlockM, kBlockN).pack();
  int stage = 0;
  uint32_t phase = 0;
  int local = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x, ++local) {
    const WorkUnit w = decode_unit(plan, u);
    const int buf = local & 1;
    const uint32_t acc_phase = static_cast<uint32_t>(local >> 1) & 1u;
    ptx::mbar_wait(sm.acc_empty(buf), acc_phase ^ 1u, kWaitAccEmpty);  // epilogue drained it
    ptx::tc_fence_after_sync();
    const uint32_t d_tmem = tmem_base + static_cast<uint32_t>(buf * kBlockN);
    for (int kt = w.k_begin; kt < w.k_end; ++kt) {
      ptx::mbar_wait(sm.full(stage), phase, kWaitFull);
      ptx::tc_fence_after_sync();
      // Scales of this stage go to their own TMEM columns: an MMA reading a previous stage's
      // columns may still be in flight (tcgen05.mma -> tcgen05.cp is not an ordered pair).
      // Reuse is safe: full(stage) arrives only after empty(stage), i.e. after those MMAs.
      const uint32_t sfa_tmem = tmem_base + kSfColBase + stage * kSfColsPerStage;
      const uint32_t sfb_tmem = sfa_tmem + kSfaColsPerStage;
      const uint32_t sfa_smem = ptx::smem_addr(sm.sfa(stage));
      const uint32_t sfb_smem = ptx::smem_addr(sm.sfb(stage));
#pragma unroll
      for (int j = 0; j < kMmasPerStage; ++j) {
        ptx::tmem_copy_scale_atom(sfa_tmem + j * kSfColsPerMma,
                                  make_scale_atom_desc(sfa_smem + j * kAtomBytes).pack());
        ptx::tmem_copy_scale_atom(sfb_tmem + j * kSfColsPerMma,
                                  make_scale_atom_desc(sfb_smem + j * kAtomBytes).pack());
      }
      const uint32_t a_smem = ptx::smem_addr(sm.a(stage));
      const uint32_t b_smem = ptx::smem_addr(sm.b(stage));
#pragma unroll
      for (int j = 0; j < kMmasPerStage; ++j) {
        // K step j = 32 bytes further along the 128-byte swizzled row; the hardware applies
        // the swizzle to the computed addresses, so the start address simply advances.
        const uint32_t k_bytes = static_cast<uint32_t>(j * kMmaK / 2);
        ptx::mma_nvfp4(d_tmem, make_kmajor_sw128_desc(a_smem + k_bytes).pack(),
                       make_kmajor_sw128_desc(b_smem + k_bytes).pack(), idesc,
                       sfa_tmem + j * kSfColsPerMma, sfb_tmem + j * kSfColsPerMma,
                       kt > w.k_begin || j > 0);
      }
      ptx::mma_commit(sm.empty(stage));  // frees the stage once these MMAs have read it
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    ptx::mma_commit(sm.acc_full(buf));  // accumulator complete
  }
}

__device__ void run_epilogue(const SmemLayout& sm, const KernelArgs& args, uint32_t tmem_base,
                             int warp, int lane) {
  const WorkPlan& plan = args.plan;
  const int quarter = warp % 4;  // the TMEM lane quarter this warp may access
  const int row_in_tile = quarter * 32 + lane;
  const int epi_tid = (warp - 2) * 32 + lane;
  int local = 0;
  for (int u = blockIdx.x; u < plan.units(); u += gridDim.x, ++local) {
    const WorkUnit w = decode_unit(plan, u);
    const int buf = local & 1;
    const uint32_t acc_phase = static_cast<uint32_t>(local >> 1) & 1u;
    ptx::mbar_wait(sm.acc_full(buf), acc_phase, kWaitAccFull);
    ptx::tc_fence_after_sync();

    const int64_t row = static_cast<int64_t>(w.m_tile) * kBlockM + row_in_tile;
    const bool row_ok = row < args.m;
    const uint32_t taddr = tmem_base + (static_cast<uint32_t>(quarter * 32) << 16) +
                           static_cast<uint32_t>(buf * kBlockN);
#pragma unroll 1
    for (int c = 0; c < kBlockN; c += 32) {
      float v[32];
      // tcgen05.ld is .sync.aligned: every lane must reach it together, so the warp converges
      // first (the per-lane stores of the previous column block may have diverged it).
      __syncwarp();
      ptx::tmem_load_32cols(taddr + c, v);
      const int64_t col = static_cast<int64_t>(w.n_tile) * kBlockN + c;
      if (row_ok && col < args.n) {
        if (plan.splits == 1) {
          store_fp16x32(args.c + (static_cast<int64_t>(w.batch) * args.m + row) * args.n + col, v);
        } else {
          float4* p = reinterpret_cast<float4*>(partial_ptr(args, w, w.split, row_in_tile, c));
#pragma unroll
          for (int q = 0; q < 8; ++q)
            p[q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
        }
      }
    }
    // The accumulator may now be overwritten by the next unit's MMAs.
    ptx::tc_fence_before_sync();
    __syncwarp();
    if (lane == 0) ptx::mbar_arrive(sm.acc_empty(buf));

    if (plan.splits == 1) continue;
    // Split-K: the last of the tile's CTAs to finish sums all partials in split order, so the
    // result does not depend on which CTA finished last (threadfence-reduction pattern).
    __threadfence();
    ptx::named_barrier_sync(1, 32 * kEpilogueWarps);
    if (epi_tid == 0)
      *sm.last_flag() =
          atomicAdd(args.counters + w.tile, 1u) == static_cast<uint32_t>(plan.splits - 1);
    ptx::named_barrier_sync(1, 32 * kEpilogueWarps);
    if (!*sm.last_flag()) continue;
    __threadfence();
    if (row_ok) {
#pragma unroll 1
      for (int c = 0; c < kBlockN; c += 32) {
        const int64_t col = static_cast<int64_t>(w.n_tile) * kBlockN + c;
        if (col >= args.n) break;
        float acc[32];
#pragma unroll
        for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
        for (int s = 0; s < plan.splits; ++s) {
          // L2 loads (.cg): other SMs wrote these, and L1 is not coherent.
          const float4* p =
              reinterpret_cast<const float4*>(partial_ptr(args, w, s, row_in_tile, c));
#pragma unroll
          for (int q = 0; q < 8; ++q) {
            const float4 x = __ldcg(p + q);
            acc[4 * q] += x.x;
            acc[4 * q + 1] += x.y;
            acc[4 * q + 2] += x.z;
            acc[4 * q + 3] += x.w;
          }
        }
        store_fp16x32(args.c + (static_cast<int64_t>(w.batch) * args.m + row) * args.n + col, acc);
      }
    }
    if (epi_tid == 0) args.counters[w.tile] = 0;  // every split has arrived: ready for next run
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    nvfp4_gemm_sm100_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_sfa,
                            const __grid_constant__ CUtensorMap map_sfb, const KernelArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // The 128B-swizzled tiles need 1024-byte aligned addresses in the shared window.
  const uint32_t raw = ptx::smem_addr(smem_raw);
  const SmemLayout sm{smem_raw + ((1024u - (raw & 1023u)) & 1023u)};
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbar_init(sm.full(s), 1);   // the producer's arrive.expect_tx (+ TMA bytes)
      ptx::mbar_init(sm.empty(s), 1);  // one tcgen05.commit
    }
    for (int b = 0; b < kAccBuffers; ++b) {
      ptx::mbar_init(sm.acc_full(b), 1);                // one tcgen05.commit
      ptx::mbar_init(sm.acc_empty(b), kEpilogueWarps);  // one arrive per epilogue warp
    }
    ptx::fence_barrier_init();
  }
  if (warp == 0 && lane == 0) {
    ptx::prefetch_tensormap(&map_a);
    ptx::prefetch_tensormap(&map_b);
    ptx::prefetch_tensormap(&map_sfa);
    ptx::prefetch_tensormap(&map_sfb);
  }
  if (warp == 1) {
    ptx::tmem_alloc(sm.tmem_slot(), kTmemCols);
    ptx::tmem_relinquish();  // one CTA per SM: nobody else will allocate
  }
  ptx::tc_fence_before_sync();
  __syncthreads();
  ptx::tc_fence_after_sync();
  const uint32_t tmem_base = *sm.tmem_slot();

  if (warp == 0) {
    if (lane == 0) run_producer(sm, args, &map_a, &map_b, &map_sfa, &map_sfb);
  } else if (warp == 1) {
    if (lane == 0) run_mma_issuer(sm, args, tmem_base);
  } else {
    run_epilogue(sm, args, tmem_base, warp, lane);
  }

  // Every accumulator was read (epilogue waited on each commit), so TMEM can be released.
  ptx::tc_fence_before_sync();
  __syncthreads();
  if (warp == 1) {
    __syncwarp();
    ptx::tc_fence_after_sync();
    ptx::tmem_dealloc(tmem_base, kTmemCols);
  }
#else
  // Built for sm_100a only (CMake target nvfp4_sm100); any other device pass must not run it.
  __trap();
#endif
}

// ---- host -----------------------------------------------------------------------------------

using EncodeTiledFn = decltype(&cuTensorMapEncodeTiled);

// The driver's tensor-map encoder through the runtime's entry-point query: no libcuda link.
EncodeTiledFn encode_tiled_fn() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    NVFP4_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                      cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      throw runtime_error("sm100: the CUDA driver has no cuTensorMapEncodeTiled (needs 12.0+)");
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

CUtensorMap encode_map(const TensorMapParams& p, const void* base, const char* what) {
  if (const char* err = p.check())
    throw runtime_error(fmt::format("sm100: tensor map of {}: {}", what, err));
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    throw runtime_error(fmt::format("sm100: {} must be 16-byte aligned for TMA", what));
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elem_strides[5];
  for (int i = 0; i < 5; ++i) {
    dims[i] = p.dims[i];
    box[i] = p.box[i];
    elem_strides[i] = p.elem_strides[i];
  }
  for (int i = 0; i < 4; ++i) strides[i] = p.strides_bytes[i];
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  const CUresult r =
      encode_tiled_fn()(&map, static_cast<CUtensorMapDataType>(p.dtype), p.rank,
                        const_cast<void*>(base), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, static_cast<CUtensorMapSwizzle>(p.swizzle),
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw runtime_error(fmt::format("sm100: cuTensorMapEncodeTiled({}) failed: CUresult {}", what,
                                    static_cast<int>(r)));
  return map;
}

// The current device's SM count; without a usable device (shape queries on a machine that
// cannot run the kernel anyway) a B200's 148, so workspace_bytes() still answers.
int current_sm_count() {
  constexpr int kB200Sms = 148;
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later checks start clean
    return kB200Sms;
  }
  return sms;
}

class Sm100Gemm final : public Gemm {
 public:
  std::string name() const override { return "sm100"; }
  std::string description() const override {
    return "Blackwell sm_100a: TMA + tcgen05.mma kind::mxf4nvf4 scale_vec::4X (UE4M3 per 16, scales in TMEM), "
           "warp-specialized persistent, split-K for few tiles (B200/GB200 only)";
  }
  Availability availability(const DeviceInfo& dev) const override {
    if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
    if (dev.cc_major != 10 || dev.cc_minor != 0)
      return {false, fmt::format("needs compute capability 10.0 (sm_100a code, B200/GB200); {} "
                                 "has {}",
                                 dev.name, dev.cc_string())};
    return {true, {}};
  }
  std::string shape_error(const Shape& s) const override {
    if (s.k % kBlockK != 0) return fmt::format("K must be a multiple of {} (the K tile)", kBlockK);
    if (s.n % 32 != 0) return "N must be a multiple of 32 (epilogue stores 32 columns at once)";
    const int64_t tiles = (s.m + kBlockM - 1) / kBlockM * ((s.n + kBlockN - 1) / kBlockN) * s.l;
    if (tiles * kMaxSplits >= (int64_t{1} << 31)) return "too many 128x128 tiles (M/128*N/128*L)";
    if (s.m > (int64_t{1} << 31) || s.n > (int64_t{1} << 31)) return "M and N must be below 2^31";
    return {};
  }
  size_t workspace_bytes(const Shape& s) const override {
    const WorkPlan p = plan_for(s);
    if (p.splits == 1) return 0;
    return static_cast<size_t>(p.units()) * kBlockM * kBlockN * sizeof(float);
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(nvfp4_gemm_sm100_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    attribute_set_ = true;
    ensure_counters(plan_for(s), stream);
    ensure_maps(s, ops);
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    if (!attribute_set_) prepare(s, ops, stream);
    const WorkPlan plan = plan_for(s);
    if (plan.units() == 0) return;
    ensure_counters(plan, stream);
    ensure_maps(s, ops);
    if (plan.splits > 1 && workspace == nullptr)
      throw runtime_error("sm100: split-K needs the workspace_bytes() workspace, got none");
    KernelArgs args;
    args.c = ops.c;
    args.partials = static_cast<float*>(workspace);
    args.counters = counters_.get<uint32_t>();
    args.plan = plan;
    args.m = static_cast<int>(s.m);
    args.n = static_cast<int>(s.n);
    const int grid = std::min(plan.units(), sm_count());
    nvfp4_gemm_sm100_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps_.a, maps_.b, maps_.sfa,
                                                                    maps_.sfb, args);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  int auto_rank() const override { return 0; }  // raise once verified on a B200

 private:
  struct Maps {
    CUtensorMap a, b, sfa, sfb;
  };
  struct MapKey {
    Shape shape;
    Operands ops;
    bool operator==(const MapKey& o) const {
      return shape.m == o.shape.m && shape.n == o.shape.n && shape.k == o.shape.k &&
             shape.l == o.shape.l && ops.a == o.ops.a && ops.b == o.ops.b &&
             ops.sfa_blocked == o.ops.sfa_blocked && ops.sfb_blocked == o.ops.sfb_blocked;
    }
  };

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

  // Encoding is host work of a few microseconds per map: done once per shape and buffers, so
  // back-to-back timed calls do not starve the GPU.
  void ensure_maps(const Shape& s, const Operands& ops) {
    const MapKey key{s, ops};
    if (maps_valid_ && key == map_key_) return;
    maps_.a = encode_map(make_operand_map_params(s.m, s.k, s.l, kBlockM), ops.a, "A");
    maps_.b = encode_map(make_operand_map_params(s.n, s.k, s.l, kBlockN), ops.b, "B");
    maps_.sfa = encode_map(make_scale_map_params(s.m, s.k, s.l), ops.sfa_blocked, "blocked SFA");
    maps_.sfb = encode_map(make_scale_map_params(s.n, s.k, s.l), ops.sfb_blocked, "blocked SFB");
    map_key_ = key;
    maps_valid_ = true;
  }

  mutable int sm_count_ = 0;
  bool attribute_set_ = false;
  DeviceBuffer counters_;
  Maps maps_{};
  MapKey map_key_{};
  bool maps_valid_ = false;
};

}  // namespace
}  // namespace sm100

std::unique_ptr<Gemm> make_sm100_gemm() { return std::make_unique<sm100::Sm100Gemm>(); }

}  // namespace nvfp4
