// The fp16 mainloop's launcher (mainloop_kernel.cuh): tensor maps, split-K counters, one
// instantiation per tile (128 x 16..256 in steps of 16, and 256x128), persistent grid.
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kernels/sm90/launch.hpp"
#include "kernels/sm90/mainloop_kernel.cuh"
#include "src/core/arith.hpp"
#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/tensor_map.hpp"

namespace nvfp4::sm90 {

CUtensorMap fp16_tensor_map(const void* base, int64_t rows, int64_t cols, int64_t l, int box_rows,
                            CUtensorMapL2promotion l2, const std::string& what) {
  TensorMapSpec t;
  t.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  t.rank = 3;
  t.dims[0] = static_cast<uint64_t>(cols);
  t.dims[1] = static_cast<uint64_t>(rows);
  t.dims[2] = static_cast<uint64_t>(l);
  t.strides_bytes[0] = static_cast<uint64_t>(cols) * 2;
  t.strides_bytes[1] = static_cast<uint64_t>(rows * cols) * 2;
  t.box[0] = 64;
  t.box[1] = static_cast<uint32_t>(box_rows);
  t.box[2] = 1;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  t.l2_promotion = l2;
  return encode_tensor_map(t, base, "sm90 " + what);
}

namespace {

template <int BM, int BN>
void launch_tile(const Shape& s, const __half* A, const __half* B, __half* C, const TwoPhaseConfig& cfg,
                 void* workspace, cudaStream_t stream, DeviceState& dev) {
  using S = mainloop::Tile<BM, BN>;
  const int64_t m = s.m, n = s.n, k = s.k, l = s.l;
  const int64_t tiles_m = ceil_div(m, BM), tiles_n = ceil_div(n, BN);
  const int64_t tiles = l * tiles_m * tiles_n;
  const int splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cfg.split, k / 64)));
  const int64_t units = tiles * splits;
  if (units > INT32_MAX / 2 || m > INT32_MAX / 2 || n > INT32_MAX / 2 || k > INT32_MAX / 2 || l > 65535)
    throw runtime_error("sm90 fp16 mainloop: problem too large for 32-bit tile indexing");

  mainloop::Params p{};
  p.C = C;
  p.M = static_cast<int>(m);
  p.N = static_cast<int>(n);
  p.L = static_cast<int>(l);
  p.nk = static_cast<int>(k / 64);
  p.tiles_m = static_cast<int>(tiles_m);
  p.tiles_n = static_cast<int>(tiles_n);
  p.splits = splits;
  p.group_m = std::max(1, cfg.group);
  p.units = static_cast<int>(units);
  if (splits > 1) {
    if (workspace == nullptr) throw runtime_error("sm90 fp16 mainloop: split-K needs a workspace");
    const size_t part = round_up(static_cast<size_t>(tiles * splits) * BM * BN * sizeof(float), 256);
    p.ws = static_cast<float*>(workspace);
    p.counters = reinterpret_cast<int*>(static_cast<char*>(workspace) + part);
    NVFP4_CUDA_CHECK(cudaMemsetAsync(p.counters, 0, static_cast<size_t>(tiles) * sizeof(int), stream));
  }

  p.tma_store = (n % 8 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0) ? 1 : 0;
  const std::array<CUtensorMap, 3>& maps = dev.mainloop_maps.get(MapKey{s, {A, B, C}, BM * 1024 + BN}, [&] {
    std::array<CUtensorMap, 3> t;
    t[0] = fp16_tensor_map(A, m, k, l, BM, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "fp16 A");
    t[1] = fp16_tensor_map(B, n, k, l, BN, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "fp16 B");
    std::memset(&t[2], 0, sizeof(t[2]));
    if (p.tma_store) t[2] = fp16_tensor_map(C, m, n, l, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C");
    return t;
  });
  const CUtensorMap &ta = maps[0], &tb = maps[1], &tc = maps[2];

  auto kern = mainloop::mainloop_kernel<BM, BN>;
  dev.ensure_smem_limit(reinterpret_cast<const void*>(kern), S::kSmem);
  const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(dev.sm_count(), units));
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(static_cast<unsigned>(grid), 1, 1);
  lc.blockDim = dim3(384, 1, 1);
  lc.dynamicSmemBytes = S::kSmem;
  lc.stream = stream;
  lc.numAttrs = 0;
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&lc, kern, ta, tb, tc, p));
  NVFP4_CUDA_CHECK_LAUNCH();
}

// Tile 128 x cfg.bn: one instantiation per N step of 16.
template <int BN>
void launch_bm128(const Shape& s, const __half* A, const __half* B, __half* C, const TwoPhaseConfig& cfg,
                  void* workspace, cudaStream_t stream, DeviceState& dev) {
  if (cfg.bn == BN) return launch_tile<128, BN>(s, A, B, C, cfg, workspace, stream, dev);
  if constexpr (BN < 256) launch_bm128<BN + 16>(s, A, B, C, cfg, workspace, stream, dev);
}

}  // namespace

void launch_mainloop(const Shape& s, const uint16_t* a16, const uint16_t* b16, uint16_t* c,
                     const TwoPhaseConfig& cfg, void* workspace, cudaStream_t stream, DeviceState& dev) {
  if (s.m < 1 || s.n < 1 || s.l < 1 || s.k < 64 || s.k % 64 != 0)
    throw runtime_error("sm90 fp16 mainloop: needs M, N, L >= 1 and K a positive multiple of 64");
  if ((reinterpret_cast<uintptr_t>(a16) | reinterpret_cast<uintptr_t>(b16)) % 16 != 0)
    throw runtime_error("sm90 fp16 mainloop: A and B must be 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(c) % 4 != 0) throw runtime_error("sm90 fp16 mainloop: C must be 4-byte aligned");
  if (!mainloop_tile_built(cfg.bm, cfg.bn))
    throw runtime_error(fmt::format("sm90 fp16 mainloop: tile {}x{} not built (128 x 16..256 in steps of 16, or "
                                  "256 x 128)", cfg.bm, cfg.bn));
  const auto* A = reinterpret_cast<const __half*>(a16);
  const auto* B = reinterpret_cast<const __half*>(b16);
  auto* C = reinterpret_cast<__half*>(c);
  if (cfg.bm == 256) return launch_tile<256, 128>(s, A, B, C, cfg, workspace, stream, dev);
  launch_bm128<16>(s, A, B, C, cfg, workspace, stream, dev);
}

}  // namespace nvfp4::sm90
