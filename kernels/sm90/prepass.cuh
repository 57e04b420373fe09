// The fused path's A prepass (launched by fused.cu; timed alone, beside the forms it was
// measured against, by bench/sm90_prepass_bench.cu): A decoded once to fp16 in 128-row tiles per
// 64-wide K block,
// 128-byte swizzled as the SW128 descriptor wants them ([L][tiles128][nk][128 rows][128 B]), rows
// past M zero; it also zeroes the split-K tile counters and triggers the main kernel (PDL) at
// its start.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/ptx.cuh"

namespace nvfp4::sm90 {

struct PrepassParams {
  const uint8_t* a;
  const uint8_t* sfa;  // linear [L, M, K/16]
  uint8_t* a16;
  int64_t m, k, l;
  int nk;
  int tiles128;
  int* counters;       // may be null
  int ncounters;
  int64_t live_rows;   // PrepassMap::BlockPerThread: rows below this (M rounded up to the M tile)
                       // are written, the rest of the last tile is never read and is left alone
};

// Which thread decodes what:
//   RowPerThread:   128 threads a block, one per row of the tile (32 raw bytes each), every row
//                   written, rows past M as zeros;
//   BlockPerThread: 512 threads a block, one per 16-element scale block (8 raw bytes and one
//                   scale byte, as the peer's dequantization kernel reads them: a warp reads 8
//                   whole rows), each placing word c of its row's eight 16-byte chunks; only the
//                   rows below p.live_rows are written.
enum class PrepassMap { RowPerThread, BlockPerThread };

// Rows of 128-row tile tm that BlockPerThread writes (the bench compares those).
__host__ __device__ inline int prepass_live_in_tile(const PrepassParams& p, int64_t tm) {
  const int64_t left = p.live_rows - tm * 128;
  return left < 128 ? static_cast<int>(left) : 128;
}

template <PrepassMap kMap>
constexpr int prepass_threads() {
  return kMap == PrepassMap::BlockPerThread ? 512 : 128;
}

// Where a prepass block starts: it triggers the main kernel (PDL) and zeroes the split-K tile
// counters (every call starts them at zero).
__device__ __forceinline__ void prepass_begin(const PrepassParams& p) {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (p.counters != nullptr)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.ncounters;
         i += int64_t(gridDim.x) * blockDim.x)
      p.counters[i] = 0;
}

// RowPerThread's decode of one K block of row r of a tile into shared memory, 128-byte
// swizzled (chunk q of the row at q ^ (r % 8)) as the main kernel wants it.
__device__ __forceinline__ void prepass_decode_row(uint4 lo, uint4 hi, uint32_t sc, uint4* tile, int r) {
  const int sw = r & 7;
  decode_row(lo, hi, sc, [&](int q, uint4 v) { tile[r * 8 + (q ^ sw)] = v; });
}

// The main kernel reads the tiles with bulk copies (the async proxy): the PTX ISA asks for a
// proxy fence between generic writes and async-proxy reads of the same memory and does not say
// that the grid dependency is one.
__device__ __forceinline__ void prepass_fence_for_bulk_reads() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// One block per (batch, 128-row tile, K block): its threads decode the tile into shared memory
// (kFusedATile bytes, dynamic), then store it with 16-byte stores (coalesced) and fence for the
// main kernel's bulk reads.
template <PrepassMap kMap>
__global__ void __launch_bounds__(prepass_threads<kMap>()) decode_a_kernel(const PrepassParams p) {
#if defined(__CUDA_ARCH__)
  prepass_begin(p);
  extern __shared__ __align__(1024) uint4 prepass_tiles[];  // kFusedATile bytes
  const int64_t blk = blockIdx.x;
  const int64_t g = blk % p.nk, rest = blk / p.nk;
  const int64_t tm = rest % p.tiles128, batch = rest / p.tiles128;
  const int64_t kbytes = p.k / 2, kblocks = p.k / 16;
  // a16's tiles are in (batch, tile, K block) order
  uint4* dst = reinterpret_cast<uint4*>(p.a16 + ((batch * p.tiles128 + tm) * p.nk + g) * int64_t(kFusedATile));
  if constexpr (kMap == PrepassMap::BlockPerThread) {
    // thread t: row t / 4 of the tile, scale block c = t % 4 of its 64-wide K block; word c of
    // chunk q = 2S + u is block c's raw word u decoded at k-step S (decode_row's K order)
    const int t = threadIdx.x, r = t >> 2, c = t & 3;
    const int64_t row = tm * 128 + r;
    const int live = prepass_live_in_tile(p, tm);
    uint32_t* words = reinterpret_cast<uint32_t*>(prepass_tiles);
    if (r < live) {
      uint32_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (row < p.m) {
        const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p.a + (batch * p.m + row) * kbytes + g * 32 + c * 8));
        const uint32_t sc = __ldg(p.sfa + (batch * p.m + row) * kblocks + g * 4 + c);
        const uint32_t m = bcast_lo(scale2_fp16(sc));
        w[0] = hmul2_bits(e2m1x2_raw<0>(raw.x), m);
        w[1] = hmul2_bits(e2m1x2_raw<0>(raw.y), m);
        w[2] = hmul2_bits(e2m1x2_raw<1>(raw.x), m);
        w[3] = hmul2_bits(e2m1x2_raw<1>(raw.y), m);
        w[4] = hmul2_bits(e2m1x2_raw<2>(raw.x), m);
        w[5] = hmul2_bits(e2m1x2_raw<2>(raw.y), m);
        w[6] = hmul2_bits(e2m1x2_raw<3>(raw.x), m);
        w[7] = hmul2_bits(e2m1x2_raw<3>(raw.y), m);
      }
      const int sw = r & 7;
#pragma unroll
      for (int q = 0; q < 8; ++q) words[r * 32 + (q ^ sw) * 4 + c] = w[q];
    }
    __syncthreads();
    // the live rows are the tile's first live * 128 bytes: 16-byte stores, coalesced
    for (int i = t; i < live * 8; i += 512) dst[i] = prepass_tiles[i];
  } else {
    const int r = threadIdx.x;
    const int64_t row = tm * 128 + r;
    if (row < p.m) {
      const uint8_t* src = p.a + (batch * p.m + row) * kbytes + g * 32;
      const uint4 lo = __ldg(reinterpret_cast<const uint4*>(src));
      const uint4 hi = __ldg(reinterpret_cast<const uint4*>(src + 16));
      const uint32_t sc = __ldg(reinterpret_cast<const uint32_t*>(p.sfa + (batch * p.m + row) * kblocks + g * 4));
      prepass_decode_row(lo, hi, sc, prepass_tiles, r);
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q) prepass_tiles[r * 8 + q] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[r + 128 * i] = prepass_tiles[r + 128 * i];
  }
  prepass_fence_for_bulk_reads();
#else
  (void)p;
#endif
}

// BlockPerThread where the M tile leaves rows of the 128-row tiles unread (small M with an M
// tile below 128: it writes only the live rows), RowPerThread where every row is read: the
// mapping faster in the kernel at each (docs/kernels.md, history "A prepass forms").
inline PrepassMap prepass_map(const PrepassParams& p) {
  return p.live_rows < int64_t(p.tiles128) * 128 ? PrepassMap::BlockPerThread : PrepassMap::RowPerThread;
}

// Blocks of decode_a_kernel for p: one per (batch, 128-row tile, K block).
inline int64_t prepass_blocks(const PrepassParams& p) { return p.l * int64_t(p.tiles128) * p.nk; }

}  // namespace nvfp4::sm90
