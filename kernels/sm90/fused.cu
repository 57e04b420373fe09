// The fused path's whole launcher (fused_kernel.cuh): the workspace carved per fused_layout(),
// the A prepass, the tensor maps (C, raw B, B's scales), and the persistent main kernel launched
// after the prepass with programmatic dependent launch (PDL).
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "kernels/sm90/fused_kernel.cuh"
#include "kernels/sm90/launch.hpp"
#include "kernels/sm90/prepass.cuh"
#include "src/core/arith.hpp"
#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/tensor_map.hpp"

namespace nvfp4::sm90 {
namespace {

// B's rows as [L, N, row_bytes] bytes (its packed values or its scales), read in boxes of
// kFusedRowsN rows x box_bytes; out-of-bounds reads zero.
CUtensorMap b_rows_map(const void* base, const Shape& s, int64_t row_bytes, uint32_t box_bytes,
                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, const char* what) {
  TensorMapSpec t;
  t.rank = 3;
  t.dims[0] = static_cast<uint64_t>(row_bytes);
  t.dims[1] = static_cast<uint64_t>(s.n);
  t.dims[2] = static_cast<uint64_t>(s.l);
  t.strides_bytes[0] = static_cast<uint64_t>(row_bytes);
  t.strides_bytes[1] = static_cast<uint64_t>(row_bytes) * static_cast<uint64_t>(s.n);
  t.box[0] = box_bytes;
  t.box[1] = kFusedRowsN;
  t.swizzle = swizzle;
  t.l2_promotion = l2;
  return encode_tensor_map(t, base, what);
}

void launch_prepass(const PrepassParams& p, cudaStream_t stream) {
  constexpr size_t kSmem = kFusedATile;
  static_assert(kSmem <= 48 * 1024, "the prepass's tile fits the default shared memory");
  const auto blocks = static_cast<unsigned>(prepass_blocks(p));
  if (prepass_map(p) == PrepassMap::BlockPerThread)
    decode_a_kernel<PrepassMap::BlockPerThread>
        <<<blocks, prepass_threads<PrepassMap::BlockPerThread>(), kSmem, stream>>>(p);
  else
    decode_a_kernel<PrepassMap::RowPerThread><<<blocks, prepass_threads<PrepassMap::RowPerThread>(), kSmem, stream>>>(p);
  NVFP4_CUDA_CHECK_LAUNCH();
}

// Persistent: `grid` CTAs (OCC per SM at most) walk the units. Launched with programmatic stream
// serialization after the A prepass, which triggers its dependents at its start: the producer
// waits (griddepcontrol.wait) before its first read of the prepass output.
template <int MT, int OCC = 1>
void launch_main(const fused::Params& p, const std::array<CUtensorMap, 3>& maps, int grid, cudaStream_t stream,
                 DeviceState& dev) {
  using C = fused::Cfg<MT, OCC>;
  dev.ensure_smem_limit(reinterpret_cast<const void*>(fused::fused_kernel<MT, OCC>), C::kSmem);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid), 1, 1);
  cfg.blockDim = dim3(fused::kThreads, 1, 1);
  cfg.dynamicSmemBytes = C::kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  NVFP4_CUDA_CHECK(cudaLaunchKernelEx(&cfg, fused::fused_kernel<MT, OCC>, maps[0], maps[1], maps[2], p));
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_fused(const Shape& s, const Operands& ops, const FusedConfig& c, void* workspace,
                  cudaStream_t stream, DeviceState& dev) {
  if (!fused_tile_built(c.m_tile))
    throw usage_error(fmt::format("sm90: fused M tile {} not built (16/32/64/128/256)", c.m_tile));
  if (!fused_per_sm_built(c.m_tile, c.per_sm))
    throw usage_error(fmt::format("sm90: fused M tile {} with {} CTAs per SM not built ({})", c.m_tile, c.per_sm,
                                  kFusedPerSmRule));
  const FusedLayout w = fused_layout(s, c);
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  fused::Params p{};
  p.sfb = ops.sfb;
  p.a16 = ws;
  p.c = reinterpret_cast<__half*>(ops.c);
  p.partial = w.slots > 0 ? reinterpret_cast<float*>(ws + round_up(w.a16, 256)) : nullptr;
  p.counters = w.slots > 0
                   ? reinterpret_cast<int*>(ws + round_up(w.a16, 256) + round_up(w.partial, 256))
                   : nullptr;
  p.m = static_cast<int>(s.m);
  p.n = static_cast<int>(s.n);
  p.l = static_cast<int>(s.l);
  if (s.k / 2 > std::numeric_limits<int32_t>::max()) throw usage_error("sm90: K too large for the fused path");
  const FusedWalk walk = fused_walk(s, c, dev.sm_count());
  p.nk = walk.nk;
  p.kblocks = static_cast<int>(s.k / 16);
  p.tiles128 = w.tiles128;
  p.tiles_m = w.tiles_m;
  p.tiles_n = w.tiles_n;
  p.slots = w.slots;
  p.split = walk.split;
  p.units = walk.units;
  p.nq = walk.nq;
  p.workers = walk.workers;
  p.wq = walk.wq;
  p.tma_store = s.n % 8 == 0 ? 1 : 0;  // C is 16-byte aligned (launch() checks)
  // Scales by TMA: the map's row pitch (K / 16 bytes) and base must be 16-byte multiples.
  p.scale_tma = (reinterpret_cast<uintptr_t>(ops.sfb) % 16 == 0 && p.kblocks % 16 == 0) ? 1 : 0;
  // [0] C (only with TMA stores), [1] raw B: [L, N, K/2] bytes read in [128 rows x 128 bytes]
  // boxes (4 K blocks), 128-byte swizzle, rows past N zero; [2] (scale_tma) B's scales: [L, N,
  // K/16] bytes in [128 rows x 32 bytes] boxes, unswizzled, past N or K / 16 zero.
  const int box_rows = c.m_tile < 64 ? c.m_tile : 64;
  const auto& maps = dev.fused_maps.get(MapKey{s, {ops.c, ops.b, ops.sfb}, box_rows}, [&] {
    std::array<CUtensorMap, 3> t;
    std::memset(t.data(), 0, sizeof t);
    if (p.tma_store)
      t[0] = fp16_tensor_map(p.c, s.m, s.n, s.l, box_rows, CU_TENSOR_MAP_L2_PROMOTION_NONE, "fused C");
    t[1] = b_rows_map(ops.b, s, s.k / 2, kFusedBStageKb * 32, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "fused raw B");
    if (p.scale_tma)  // two K quads a box (config.hpp: fused_scale_box_start)
      t[2] = b_rows_map(ops.sfb, s, s.k / 16, kFusedScaleRow, CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_NONE, "fused B scales");
    return t;
  });
  // The prepass decodes A into w.tiles128 tiles per batch and zeroes the split-K counters; it
  // triggers the main kernel (PDL) at its start.
  PrepassParams pp{};
  pp.a = ops.a;
  pp.sfa = ops.sfa;
  pp.a16 = ws;
  pp.m = s.m;
  pp.k = s.k;
  pp.l = s.l;
  pp.nk = p.nk;
  pp.tiles128 = w.tiles128;
  pp.counters = p.counters;
  pp.ncounters = p.counters != nullptr ? w.tiles : 0;
  pp.live_rows = (s.m + c.m_tile - 1) / c.m_tile * c.m_tile;  // the rows an M tile reads
  launch_prepass(pp, stream);
  const int grid = walk.grid;  // persistent: per_sm CTAs per SM at most, or one per stream-K worker
  if (dev.fused_stamps.words != nullptr) {  // the time line, for diagnosis (stamps.hpp)
    if (grid > dev.fused_stamps.ctas)
      throw usage_error(fmt::format("sm90: the stamps have room for {} CTAs, this launch has {}",
                                    dev.fused_stamps.ctas, grid));
    p.stamps = TimeLine{dev.fused_stamps.words, dev.fused_stamps.units_per_cta};
    dev.fused_stamps.grid = grid;
  }
  switch (c.m_tile) {
    case 16:
      if (c.per_sm == 2) launch_main<16, 2>(p, maps, grid, stream, dev);
      else launch_main<16>(p, maps, grid, stream, dev);
      break;
    case 32: launch_main<32>(p, maps, grid, stream, dev); break;
    case 64: launch_main<64>(p, maps, grid, stream, dev); break;
    case 128: launch_main<128>(p, maps, grid, stream, dev); break;
    default: launch_main<256>(p, maps, grid, stream, dev); break;
  }
}

}  // namespace nvfp4::sm90
