// The model test of issue 47 (a small-M sm90 path without a B ring): the lean streaming loop alone
// on the natural NVFP4 layout at M = 16, before anyone builds the path (bench/notes-sm90-stream.md).
// Each warp streams its own B rows from global memory into registers with 128-bit loads, two
// groups (8 K blocks) ahead, with no shared-memory staging of B and no mbarriers. Work is split
// warp-granular stream-K: units (slice, 16-row panel, group of 4 K blocks) in that order, an equal
// contiguous range per warp over all warps of all SMs. Three variants of the same loop:
//   load     the loads alone; every loaded word is folded into an xor (LOP3) so no load is dead
//   decode   + the existing E2M1 -> fp16 fragment decode with the E4M3 scale (decode_frag); the
//            fragments are folded with 8 HFMA2 per K block in place of the 8 HMMA
//   mma      + mma.sync m16n8k16: decoded B as the A operand, the activations (A, decoded once per
//            CTA into a shared slab) as the B operand, FP32 accumulators; a warp's partial of a
//            panel-slice goes to an fp32 workspace by red.global.add.v2.f32, and the last arriver
//            of a panel (a counter per panel) writes the fp16 output and clears its workspace
// K is split into slices of <= 8 groups (2048 K) so a CTA's A slab (<= 2 slices, 64 KB each) fits
// in shared memory. mma's output is checked bit for bit against a naive reference kernel in this
// binary (dequantize, fp32 dot in K order) on the project's generator's data (GpuMode: every sum
// is exact in fp32, so any order gives the same bits), with the reference spot-checked against an
// exact CPU sum; the Normal distribution is checked with rtol = atol = 1e-3 (fp32 order differs).
// Timing: cold (a 2x L2 memset before each sample, as src/measure does), CUDA events around one
// launch, median of the samples.
// Usage: build/sm90_stream_bench [samples, default 30] [feed]   (sm_90a; NVFP4_BUILD_BENCH=ON)
// `feed` adds the feed variants (below: the loads alone, bytes in flight by register buffers or a
// shared-memory ring filled by cp.async) at 16x57344x8192, the path's units loaded several at a
// time, units over longer runs of each row, 512-byte runs moved through shared memory into the
// path's fragment order (xrun; xhold: one slot a warp, a unit read into registers before the next
// is issued), and the same bytes read in address order. Every variant that
// keeps the path's fragments is checked to read the path's bytes (an xor of its folds).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/stream_loop.cuh"
#include "src/device/cuda_check.hpp"
#include "src/format/nvfp4.hpp"
#include "src/problem/problem.hpp"

namespace nvfp4::sm90::streambench {

enum Variant { kLoad = 0, kDecode = 1, kMma = 2 };
const char* const kVariantNames[3] = {"load", "+decode", "+mma"};

constexpr int kM = 16;                // the activations' rows (the model test is M = 16 only)
constexpr int kGroupK = 256;          // K elements of one group: 4 K blocks of 64
constexpr int kGroupRowBytes = 128;   // code bytes of one B row in a group
constexpr int kGroupRowScales = 16;   // scale bytes of one B row in a group
constexpr int kSlabBlockBytes = 2048; // fp16 A of one K block in the slab: 16 rows x 4 lanes x 32 B
constexpr int kSlabGroupBytes = 4 * kSlabBlockBytes;
constexpr int kMaxSliceGroups = 8;    // 2048 K: 64 KB of fp16 A a slice

// Groups per slice: the largest divisor of the groups per row that is <= kMaxSliceGroups.
constexpr int slice_groups(int groups_per_row) {
  for (int g = kMaxSliceGroups; g > 1; --g)
    if (groups_per_row % g == 0) return g;
  return 1;
}

struct Params {
  const uint8_t* a;    // [16, K/2]
  const uint8_t* sfa;  // linear [16, K/16]
  const uint8_t* b;    // [N, K/2]
  const uint8_t* sfb;  // linear [N, K/16]
  uint16_t* c;         // [16, N] fp16
  float* ws;           // [N, 16] fp32 partial sums, zero between launches (the last arriver clears)
  int* cnt;            // [N/16] groups summed per panel, zero between launches
  uint32_t* sink;      // keeps load / decode alive; written only when a fold hits a magic value
  int n;
  int panels;          // N / 16
  int64_t units;       // slices * panels * groups per slice
  uint32_t* check;     // feed variants: where set, every warp xors its fold in (one untimed launch)
};

// ---------------------------------------------------------------------------------------------
// Device helpers

using streamloop::block_words;
using streamloop::Buf;
using streamloop::mma16816;

__device__ __forceinline__ uint32_t hfma2_bits(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <int kK>
__device__ __forceinline__ void load_group(Buf& b, const uint8_t* cp, const uint8_t* sp) {
  streamloop::load_group(b, cp, sp, 8 * (kK / 2), 8 * (kK / 16));
}

// The CTA's A slab: for each slice it holds, group, virtual K block j, row m (16) and lane column
// c (4), 32 bytes = the mma B-operand registers of lane (g = m % 8, c) for k-steps 0..3 (word 2s
// = K {s, s+4} of the scale block, word 2s+1 = K {8+s, 12+s}, decode_frag's order), in two
// 16-byte halves (k-steps 0-1, 2-3) swapped on odd rows so that 8 lanes of an LDS.128 hit 8
// different bank groups.
template <int kK>
__device__ void decode_a_slab(const Params& q, uint8_t* slab, int s_first, int s_count) {
  constexpr int kGs = slice_groups(kK / kGroupK);
  const int entries = s_count * kGs * 4 * kM * 4;
  for (int e = threadIdx.x; e < entries; e += blockDim.x) {
    const int c = e & 3, m = (e >> 2) & 15, j = (e >> 6) & 3, rest = e >> 8;
    const int gl = rest % kGs, slot = rest / kGs;
    const int grp = (s_first + slot) * kGs + gl;
    const int sb = streamloop::virtual_block(j, c);
    const uint2 w = *reinterpret_cast<const uint2*>(q.a + m * (kK / 2) + grp * kGroupRowBytes + sb * 8);
    const uint32_t s = q.sfa[m * (kK / 16) + grp * kGroupRowScales + sb];
    streamloop::slab_entry(slab + ((slot * kGs + gl) * 4 + j) * kSlabBlockBytes, m, c, w, s);
  }
}

// A warp's partial of one panel-slice segment (seg groups) into the workspace; the warp whose
// add completes the panel's K writes the fp16 panel and clears its workspace and counter.
__device__ __forceinline__ void flush_panel(const Params& q, float (&acc)[2][4], int p, int seg, int lane,
                                            int groups_per_row) {
  const int g = lane >> 2, c = lane & 3;
  float* w = q.ws + int64_t(p) * (16 * kM);
#pragma unroll
  for (int t = 0; t < 2; ++t) {
    atomicAdd(reinterpret_cast<float2*>(w + g * kM + 8 * t + 2 * c), make_float2(acc[t][0], acc[t][1]));
    atomicAdd(reinterpret_cast<float2*>(w + (g + 8) * kM + 8 * t + 2 * c), make_float2(acc[t][2], acc[t][3]));
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[t][i] = 0.0f;
  }
  __threadfence();  // every lane's adds before the counter (threadFenceReduction's pattern)
  __syncwarp();
  int last = 0;
  if (lane == 0) last = atomicAdd(q.cnt + p, seg) + seg == groups_per_row;
  last = __shfl_sync(0xFFFFFFFFu, last, 0);
  if (last) {
    __threadfence();
    float4* src = reinterpret_cast<float4*>(w) + 2 * lane;  // row n = lane / 2, m = 8 (lane & 1) ..
    const float4 v0 = __ldcg(src), v1 = __ldcg(src + 1);
    const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
    const int64_t n = int64_t(p) * 16 + (lane >> 1);
    const int m0 = 8 * (lane & 1);
#pragma unroll
    for (int i = 0; i < 8; ++i) q.c[int64_t(m0 + i) * q.n + n] = __half_as_ushort(__float2half_rn(v[i] * kAccUnscale));
    __stcg(src, make_float4(0.f, 0.f, 0.f, 0.f));
    __stcg(src + 1, make_float4(0.f, 0.f, 0.f, 0.f));
    if (lane == 0) q.cnt[p] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// The streaming kernel: one CTA per SM, kW warps.
template <int V, int kK, int kW>
__global__ void __launch_bounds__(kW * 32, 1) stream_kernel(const Params q) {
  constexpr int kGs = slice_groups(kK / kGroupK);
  constexpr int kGroupsPerRow = kK / kGroupK;
  extern __shared__ __align__(16) uint8_t slab[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int64_t total_warps = int64_t(gridDim.x) * kW, gw = int64_t(blockIdx.x) * kW + warp;
  const int64_t u0 = gw * q.units / total_warps, u1 = (gw + 1) * q.units / total_warps;
  const int n = static_cast<int>(u1 - u0);
  const int64_t per_slice = int64_t(q.panels) * kGs;

  // load cursor (slice, panel, group in slice) and this lane's code / scale pointers
  int ld_s = static_cast<int>(u0 / per_slice);
  const int64_t r0 = u0 - ld_s * per_slice;
  int ld_p = static_cast<int>(r0 / kGs), ld_gl = static_cast<int>(r0 % kGs);
  const uint8_t *cp, *sp;
  auto set_ptrs = [&] {
    const int64_t row = int64_t(ld_p) * 16 + g;
    const int col = ld_s * kGs + ld_gl;
    cp = q.b + row * (kK / 2) + col * kGroupRowBytes + 16 * c;
    sp = q.sfb + row * (kK / 16) + col * kGroupRowScales + 2 * c;
  };
  set_ptrs();
  auto load_next = [&](Buf& b) {
    load_group<kK>(b, cp, sp);
    if (++ld_gl < kGs) {
      cp += kGroupRowBytes;
      sp += kGroupRowScales;
    } else {
      ld_gl = 0;
      if (++ld_p == q.panels) {
        ld_p = 0;
        ++ld_s;
      }
      set_ptrs();
    }
  };

  Buf b0, b1, b2;
  if (n > 0) load_next(b0);
  if (n > 1) load_next(b1);

  // compute cursor: panel and group in slice, and the slab slice it reads
  int c_p = static_cast<int>(r0 / kGs), c_gl = static_cast<int>(r0 % kGs);
  uint32_t slab_slice = 0;  // byte offset of the current slice in the slab
  if constexpr (V == kMma) {
    const int64_t cu0 = int64_t(blockIdx.x) * kW * q.units / total_warps;
    const int64_t cu1 = int64_t(blockIdx.x + 1) * kW * q.units / total_warps;
    const int s_first = static_cast<int>(cu0 / per_slice);
    const int s_count = cu1 > cu0 ? static_cast<int>((cu1 - 1) / per_slice) - s_first + 1 : 0;
    decode_a_slab<kK>(q, slab, s_first, s_count);
    __syncthreads();
    slab_slice = uint32_t(static_cast<int>(u0 / per_slice) - s_first) * (kGs * kSlabGroupBytes);
  }
  if (n <= 0) return;

  const uint32_t off0 = g * 128 + c * 32 + (g & 1) * 16;         // k-steps 0-1 of row g (tile 0)
  const uint32_t off1 = g * 128 + c * 32 + ((g & 1) ^ 1) * 16;   // k-steps 2-3
  float acc[2][4];
#pragma unroll
  for (int t = 0; t < 2; ++t)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[t][i] = 0.0f;
  uint32_t fold = 0, fold2 = 0;
  int seg = 0;

  auto consume = [&](const Buf& b, int i) {
    if constexpr (V == kLoad) {
      fold ^= b.g0.x ^ b.g0.y ^ b.g0.z ^ b.g0.w ^ b.g1.x ^ b.g1.y ^ b.g1.z ^ b.g1.w;
      fold2 ^= b.h0.x ^ b.h0.y ^ b.h0.z ^ b.h0.w ^ b.h1.x ^ b.h1.y ^ b.h1.z ^ b.h1.w;
      fold ^= b.sg0 ^ b.sg1 ^ b.sh0 ^ b.sh1;
    } else {
      const uint8_t* ag = slab + slab_slice + c_gl * kSlabGroupBytes;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint2 w0, w1;
        uint32_t sc;
        switch (j) {
          case 0: block_words<0>(b, w0, w1, sc); break;
          case 1: block_words<1>(b, w0, w1, sc); break;
          case 2: block_words<2>(b, w0, w1, sc); break;
          default: block_words<3>(b, w0, w1, sc); break;
        }
        uint32_t f[4][4];
        decode_frag(w0, w1, sc, f);
        if constexpr (V == kDecode) {
#pragma unroll
          for (int s = 0; s < 4; ++s) {
            fold = hfma2_bits(f[s][0], f[s][1], fold);
            fold2 = hfma2_bits(f[s][2], f[s][3], fold2);
          }
        } else {
          const uint8_t* aj = ag + j * kSlabBlockBytes;
#pragma unroll
          for (int t = 0; t < 2; ++t) {
            const uint4 x0 = *reinterpret_cast<const uint4*>(aj + t * 1024 + off0);
            const uint4 x1 = *reinterpret_cast<const uint4*>(aj + t * 1024 + off1);
            mma16816(acc[t], f[0], x0.x, x0.y);
            mma16816(acc[t], f[1], x0.z, x0.w);
            mma16816(acc[t], f[2], x1.x, x1.y);
            mma16816(acc[t], f[3], x1.z, x1.w);
          }
        }
      }
      if constexpr (V == kMma) {
        ++seg;
        if (c_gl == kGs - 1 || i + 1 == n) {
          flush_panel(q, acc, c_p, seg, lane, kGroupsPerRow);
          seg = 0;
        }
      }
    }
    if (++c_gl == kGs) {
      c_gl = 0;
      if (++c_p == q.panels) {
        c_p = 0;
        slab_slice += kGs * kSlabGroupBytes;
      }
    }
  };

  // three register buffers, two groups in flight while the third is consumed
  for (int i = 0;;) {
    if (i + 2 < n) load_next(b2);
    consume(b0, i);
    if (++i == n) break;
    if (i + 2 < n) load_next(b0);
    consume(b1, i);
    if (++i == n) break;
    if (i + 2 < n) load_next(b1);
    consume(b2, i);
    if (++i == n) break;
  }
  if constexpr (V != kMma) {
    const uint32_t x = fold ^ (fold2 * 3u);
    if (x == 0x9E3779B9u) q.sink[gw] = x;  // practically never: keeps the folds, so the work, alive
  }
}

// ---------------------------------------------------------------------------------------------
// Feed variants (the path's first device run: its warps wait for B; bench/notes-sm90-stream.md):
// the loads alone over the same warp-granular split (units = panel x group, whole K), with a
// warp's bytes in flight set two ways - kDepth register buffers (today's loop: 3), or a per-warp
// ring of kDepth groups in shared memory filled by cp.async (no registers held while in flight) -
// to see how many bytes a warp must keep in flight and whether registers are what limits it.
enum Feed { kRegs = 0, kAsync = 1 };
constexpr int kFeedSlotBytes = 16 * kGroupRowBytes + 16 * kGroupRowScales;  // codes, then scales

template <int kK>
__device__ __forceinline__ void feed_ptrs(const Params& q, int64_t u, int g, int c, const uint8_t*& cp,
                                          const uint8_t*& sp) {
  constexpr int kG = kK / kGroupK;
  const int64_t row = (u / kG) * 16 + g;
  const int gl = static_cast<int>(u % kG);
  cp = q.b + row * (kK / 2) + gl * kGroupRowBytes + 16 * c;
  sp = q.sfb + row * (kK / 16) + gl * kGroupRowScales + 2 * c;
}

__device__ __forceinline__ uint32_t fold_buf(const Buf& b) {
  return b.g0.x ^ b.g0.y ^ b.g0.z ^ b.g0.w ^ b.g1.x ^ b.g1.y ^ b.g1.z ^ b.g1.w ^ b.h0.x ^ b.h0.y ^ b.h0.z ^
         b.h0.w ^ b.h1.x ^ b.h1.y ^ b.h1.z ^ b.h1.w ^ b.sg0 ^ b.sg1 ^ b.sh0 ^ b.sh1;
}

using streamloop::cp_async16;

// A feed variant's check: the xor of every fold, the same for any order of the same bytes read
// into the same Buf fields (each byte once), so a variant that reads other bytes shows.
__device__ __forceinline__ void check_fold(const Params& q, uint32_t fold) {
  if (!q.check) return;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) fold ^= __shfl_xor_sync(0xffffffffu, fold, o);
  if ((threadIdx.x & 31) == 0) atomicXor(q.check, fold);
}

template <int kMode, int kK, int kW, int kDepth>
__global__ void __launch_bounds__(kW * 32, 1) feed_kernel(const Params q) {
  extern __shared__ __align__(16) uint8_t ring[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int64_t total_warps = int64_t(gridDim.x) * kW, gw = int64_t(blockIdx.x) * kW + warp;
  const int64_t u0 = gw * q.units / total_warps, u1 = (gw + 1) * q.units / total_warps;
  const int n = static_cast<int>(u1 - u0);
  constexpr int kRowStride = 8 * (kK / 2);
  uint32_t fold = 0;
  if constexpr (kMode == kRegs) {
    Buf b[kDepth];
    const uint8_t *cp, *sp;
#pragma unroll
    for (int j = 0; j < kDepth - 1; ++j)
      if (j < n) {
        feed_ptrs<kK>(q, u0 + j, g, c, cp, sp);
        streamloop::load_group(b[j], cp, sp, kRowStride, kRowStride / 8);
      }
    for (int i = 0; i < n; i += kDepth) {
#pragma unroll
      for (int j = 0; j < kDepth; ++j) {  // unrolled: every buffer index is a constant
        if (i + j >= n) break;
        if (i + j + kDepth - 1 < n) {
          feed_ptrs<kK>(q, u0 + i + j + kDepth - 1, g, c, cp, sp);
          streamloop::load_group(b[(j + kDepth - 1) % kDepth], cp, sp, kRowStride, kRowStride / 8);
        }
        fold ^= fold_buf(b[j]);
      }
    }
  } else {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ring)) + warp * kDepth * kFeedSlotBytes;
    auto issue = [&](int64_t u, int slot) {
      const uint8_t *cp, *sp;
      feed_ptrs<kK>(q, u, g, c, cp, sp);
      const uint32_t d = base + slot * kFeedSlotBytes;
      cp_async16(d + g * kGroupRowBytes + 16 * c, cp);
      cp_async16(d + g * kGroupRowBytes + 16 * (c + 4), cp + 64);
      cp_async16(d + (g + 8) * kGroupRowBytes + 16 * c, cp + kRowStride);
      cp_async16(d + (g + 8) * kGroupRowBytes + 16 * (c + 4), cp + kRowStride + 64);
      if (c == 0) {  // the rows' 16 scale bytes
        cp_async16(d + 16 * kGroupRowBytes + g * kGroupRowScales, sp);
        cp_async16(d + 16 * kGroupRowBytes + (g + 8) * kGroupRowScales, sp + kRowStride / 8);
      }
    };
    for (int j = 0; j < kDepth - 1; ++j) {
      if (j < n) issue(u0 + j, j);
      streamloop::cp_async_commit();
    }
    for (int i = 0; i < n; ++i) {
      if (i + kDepth - 1 < n) issue(u0 + i + kDepth - 1, (i + kDepth - 1) % kDepth);
      streamloop::cp_async_commit();
      streamloop::cp_async_wait<kDepth - 1>();
      __syncwarp();
      const uint8_t* slot = ring + (warp * kDepth + i % kDepth) * kFeedSlotBytes;
      Buf b;
      b.g0 = *reinterpret_cast<const uint4*>(slot + g * kGroupRowBytes + 16 * c);
      b.g1 = *reinterpret_cast<const uint4*>(slot + g * kGroupRowBytes + 16 * (c + 4));
      b.h0 = *reinterpret_cast<const uint4*>(slot + (g + 8) * kGroupRowBytes + 16 * c);
      b.h1 = *reinterpret_cast<const uint4*>(slot + (g + 8) * kGroupRowBytes + 16 * (c + 4));
      const uint8_t* sc = slot + 16 * kGroupRowBytes;
      b.sg0 = *reinterpret_cast<const uint16_t*>(sc + g * kGroupRowScales + 2 * c);
      b.sg1 = *reinterpret_cast<const uint16_t*>(sc + g * kGroupRowScales + 8 + 2 * c);
      b.sh0 = *reinterpret_cast<const uint16_t*>(sc + (g + 8) * kGroupRowScales + 2 * c);
      b.sh1 = *reinterpret_cast<const uint16_t*>(sc + (g + 8) * kGroupRowScales + 8 + 2 * c);
      fold ^= fold_buf(b);
      __syncwarp();  // every lane has read the slot before the next issue refills it
    }
  }
  check_fold(q, fold);
  if (fold == 0x9E3779B9u) q.sink[gw] = fold;  // practically never: keeps the loads alive
}

// The path's own lane mapping and units, loaded kB units (consecutive groups of the same 16 rows)
// at a time, double-buffered: each row's kB x 128 bytes are requested within a few instructions,
// as a run would be, without moving any byte to another lane.
template <int kK, int kW, int kB>
__global__ void __launch_bounds__(kW * 32, 1) batch_kernel(const Params q) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int64_t total_warps = int64_t(gridDim.x) * kW, gw = int64_t(blockIdx.x) * kW + warp;
  const int64_t u0 = gw * q.units / total_warps, u1 = (gw + 1) * q.units / total_warps;
  const int n = static_cast<int>(u1 - u0);
  constexpr int kRowStride = 8 * (kK / 2);
  Buf b[2][kB];
  auto issue = [&](int first, Buf(&v)[kB]) {
#pragma unroll
    for (int j = 0; j < kB; ++j)
      if (first + j < n) {
        const uint8_t *cp, *sp;
        feed_ptrs<kK>(q, u0 + first + j, g, c, cp, sp);
        streamloop::load_group(v[j], cp, sp, kRowStride, kRowStride / 8);
      }
  };
  uint32_t fold = 0;
  issue(0, b[0]);
  for (int i = 0; i < n; i += 2 * kB) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int base = i + h * kB;
      if (base >= n) break;
      issue(base + kB, b[1 - h]);
#pragma unroll
      for (int j = 0; j < kB; ++j)
        if (base + j < n) fold ^= fold_buf(b[h][j]);
    }
  }
  check_fold(q, fold);
  if (fold == 0x9E3779B9u) q.sink[gw] = fold;  // practically never: keeps the loads alive
}

// Runs of 512 bytes a row into shared memory, read back in the path's order: a unit (16 rows x 4
// groups) goes by cp.async, each instruction over one row's 512 bytes, into a per-warp ring of
// kDepth slots; the lanes then read every group as the path's registers hold it (rows g and g+8,
// bytes 16c and 64 + 16c of the group; the scale pairs) with LDS. Chunk l of row j lands at l ^ 4(j & 1)
// so each quarter-warp's 16-byte reads fall in distinct banks. What the exchange costs on top of
// the 512-byte runs.
// The run slot (stream_loop.cuh): 512 B a row, then the scales.
constexpr int kXRun = streamloop::kRunRow, kXSlot = streamloop::kRunSlot;
static_assert(kXRun == 512, "the unit below is 4 groups");
// Unit u (a 16-row panel x 512 B a row and its 64 scale bytes a row) into the slot at d.
template <int kK>
__device__ __forceinline__ void xrun_issue(const Params& q, int64_t u, uint32_t d, int lane) {
  constexpr int kUnitsRow = kK / 2 / kXRun;
  const int64_t panel = u / kUnitsRow;
  const int part = static_cast<int>(u % kUnitsRow);
  const uint8_t* rows = q.b + panel * 16 * (kK / 2) + int64_t(part) * kXRun;
#pragma unroll
  for (int j = 0; j < 16; ++j) cp_async16(streamloop::run_code_dst(d, j, lane), rows + int64_t(j) * (kK / 2) + 16 * lane);
  const uint8_t* srows = q.sfb + panel * 16 * (kK / 16) + int64_t(part) * (kXRun / 8);
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int e = j * 32 + lane, r = e >> 2;
    cp_async16(streamloop::run_scale_dst(d, r, e & 3), srows + int64_t(r) * (kK / 16) + 16 * (e & 3));
  }
}
// Group G of the unit in `slot` (G a loop index here, unrolled)
__device__ __forceinline__ void xrun_read(const uint8_t* slot, int G, int g, int c, Buf& b) {
  const streamloop::RunLane o = streamloop::run_lane(g, c);
  switch (G) {
    case 0: streamloop::run_read<0>(slot, o, b); break;
    case 1: streamloop::run_read<1>(slot, o, b); break;
    case 2: streamloop::run_read<2>(slot, o, b); break;
    default: streamloop::run_read<3>(slot, o, b); break;
  }
}
// kDepth > 0: a ring of kDepth slots, kDepth - 1 units in flight while one is read (xrun).
// kDepth == 0 (xhold): one slot a warp; a unit's four groups are read into registers at once,
// then the next unit is issued into the same slot and is in flight while the four are used - the
// form whose shared memory fits beside the path's A slab at 16 warps.
template <int kK, int kW, int kDepth>
__global__ void __launch_bounds__(kW * 32, 1) xrun_kernel(const Params q) {
  extern __shared__ __align__(16) uint8_t ring[];
  constexpr int kSlots = kDepth > 0 ? kDepth : 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int64_t total_warps = int64_t(gridDim.x) * kW, gw = int64_t(blockIdx.x) * kW + warp;
  const int64_t units = int64_t(q.units) * kGroupRowBytes / kXRun;
  const int64_t u0 = gw * units / total_warps, u1 = (gw + 1) * units / total_warps;
  const int n = static_cast<int>(u1 - u0);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ring)) + warp * kSlots * kXSlot;
  uint32_t fold = 0;
  if constexpr (kDepth == 0) {
    const uint8_t* slot = ring + warp * kXSlot;
    if (n > 0) xrun_issue<kK>(q, u0, base, lane);
    streamloop::cp_async_commit();
    for (int i = 0; i < n; ++i) {
      streamloop::cp_async_wait<0>();
      __syncwarp();
      Buf b[kXRun / kGroupRowBytes];
#pragma unroll
      for (int G = 0; G < kXRun / kGroupRowBytes; ++G) xrun_read(slot, G, g, c, b[G]);
      __syncwarp();  // every lane has read the slot before the next issue refills it
      if (i + 1 < n) xrun_issue<kK>(q, u0 + i + 1, base, lane);
      streamloop::cp_async_commit();
#pragma unroll
      for (int G = 0; G < kXRun / kGroupRowBytes; ++G) fold ^= fold_buf(b[G]);
    }
  } else {
    for (int j = 0; j < kDepth - 1; ++j) {
      if (j < n) xrun_issue<kK>(q, u0 + j, base + j * kXSlot, lane);
      streamloop::cp_async_commit();
    }
    for (int i = 0; i < n; ++i) {
      if (i + kDepth - 1 < n) xrun_issue<kK>(q, u0 + i + kDepth - 1, base + (i + kDepth - 1) % kDepth * kXSlot, lane);
      streamloop::cp_async_commit();
      streamloop::cp_async_wait<kDepth - 1>();
      __syncwarp();
      const uint8_t* slot = ring + (warp * kDepth + i % kDepth) * kXSlot;
#pragma unroll
      for (int G = 0; G < kXRun / kGroupRowBytes; ++G) {
        Buf b;
        xrun_read(slot, G, g, c, b);
        fold ^= fold_buf(b);
      }
      __syncwarp();  // every lane has read the slot before the next issue refills it
    }
  }
  check_fold(q, fold);
  if (fold == 0x9E3779B9u) q.sink[gw] = fold;  // practically never: keeps the loads alive
}

// Longer runs of a row: a unit is a 16-row panel x kRun code bytes of each row (kRun / 128 groups)
// and their kRun / 8 scale bytes; a warp's load instruction covers kRun / 16 lanes of one row, so
// every row is read in runs of kRun bytes (the path's lanes read 64 B of each of 8 rows per load).
// The bytes are not where the mma fragments want them: this measures only what DRAM gives the
// pattern, to see whether a layout change (a shuffle or shared-memory exchange) could pay.
template <int kK, int kRun, int kW, int kDepth>
__global__ void __launch_bounds__(kW * 32, 1) run_kernel(const Params q) {
  constexpr int kCodeLoads = kRun / 32;               // 16 B loads a lane for 16 rows x kRun B
  constexpr int kLanesRow = kRun / 16;                // lanes over one row's run
  constexpr int kScaleLanesRow = kRun / 8 / 16 > 0 ? kRun / 8 / 16 : 1;
  constexpr int kScaleLoads = (16 * kScaleLanesRow + 31) / 32;
  constexpr int kUnitsRow = kK / 2 / kRun;            // units along a row
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t total_warps = int64_t(gridDim.x) * kW, gw = int64_t(blockIdx.x) * kW + warp;
  const int64_t units = int64_t(q.units) * kGroupRowBytes / kRun;
  const int64_t u0 = gw * units / total_warps, u1 = (gw + 1) * units / total_warps;
  const int n = static_cast<int>(u1 - u0);
  uint4 b[kDepth][kCodeLoads + kScaleLoads];
  auto issue = [&](int64_t u, uint4(&v)[kCodeLoads + kScaleLoads]) {
    const int64_t panel = u / kUnitsRow;
    const int part = static_cast<int>(u % kUnitsRow);
    const uint8_t* rows = q.b + panel * 16 * (kK / 2) + int64_t(part) * kRun;
#pragma unroll
    for (int j = 0; j < kCodeLoads; ++j) {
      const int e = j * 32 + lane;  // 16 B piece e of the unit: row e / kLanesRow
      v[j] = __ldcs(reinterpret_cast<const uint4*>(rows + (e / kLanesRow) * (kK / 2) + (e % kLanesRow) * 16));
    }
    const uint8_t* srows = q.sfb + panel * 16 * (kK / 16) + int64_t(part) * (kRun / 8);
#pragma unroll
    for (int j = 0; j < kScaleLoads; ++j) {
      const int e = j * 32 + lane;
      v[kCodeLoads + j] = e < 16 * kScaleLanesRow
                              ? __ldcs(reinterpret_cast<const uint4*>(srows + (e / kScaleLanesRow) * (kK / 16) +
                                                                       (e % kScaleLanesRow) * 16))
                              : make_uint4(0, 0, 0, 0);
    }
  };
  uint32_t fold = 0;
#pragma unroll
  for (int j = 0; j < kDepth - 1; ++j)
    if (j < n) issue(u0 + j, b[j]);
  for (int i = 0; i < n; i += kDepth) {
#pragma unroll
    for (int j = 0; j < kDepth; ++j) {
      if (i + j >= n) break;
      if (i + j + kDepth - 1 < n) issue(u0 + i + j + kDepth - 1, b[(j + kDepth - 1) % kDepth]);
#pragma unroll
      for (int t = 0; t < kCodeLoads + kScaleLoads; ++t) fold ^= b[j][t].x ^ b[j][t].y ^ b[j][t].z ^ b[j][t].w;
    }
  }
  if (fold == 0x9E3779B9u) q.sink[gw] = fold;  // practically never: keeps the loads alive
}

// The baseline the feed rows are read against: the same bytes (codes, then scales) read in address
// order, every thread kUnroll 16-byte loads in flight, the grid striding over both arrays.
template <int kUnroll>
__global__ void __launch_bounds__(512, 1) plain_read_kernel(const uint4* __restrict__ a, int64_t na,
                                                           const uint4* __restrict__ b, int64_t nb, uint32_t* sink) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x, first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t fold = 0;
  for (int part = 0; part < 2; ++part) {
    const uint4* p = part ? b : a;
    const int64_t n = part ? nb : na;
    int64_t i = first;
    for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) v[j] = __ldcs(p + i + j * stride);
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) fold ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
    for (; i < n; i += stride) {
      const uint4 v = __ldcs(p + i);
      fold ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (fold == 0x9E3779B9u) sink[blockIdx.x] = fold;  // practically never: keeps the loads alive
}

// The reference: one thread per output, dequantize, fp32 dot in K order, one rounding to fp16.
__global__ void reference_kernel(const uint8_t* a, const uint8_t* sfa, const uint8_t* b, const uint8_t* sfb,
                                 int n, int k, uint16_t* c) {
  const int m = threadIdx.x & 15;
  const int64_t col = int64_t(blockIdx.x) * (blockDim.x / 16) + threadIdx.x / 16;
  if (col >= n) return;
  const int kb = k / 16;
  const uint8_t* ar = a + int64_t(m) * (k / 2);
  const uint8_t* br = b + col * (k / 2);
  float acc = 0.0f;
  for (int blk = 0; blk < kb; ++blk) {
    const float sa = scale_decode(sfa[int64_t(m) * kb + blk]);
    const float sb = scale_decode(sfb[col * kb + blk]);
    for (int i = 0; i < 16; ++i) {
      const float va = e2m1_decode(fp4_at(ar, int64_t(blk) * 16 + i)) * sa;
      const float vb = e2m1_decode(fp4_at(br, int64_t(blk) * 16 + i)) * sb;
      acc = fmaf(va, vb, acc);  // va * vb is exact in fp32: fma equals multiply then add
    }
  }
  c[int64_t(m) * n + col] = __half_as_ushort(__float2half_rn(acc));
}

// ---------------------------------------------------------------------------------------------
// Host side

struct Shape3 {
  int n, k;
};

struct Device {
  int sms = 0;
  size_t l2 = 0;
  uint8_t* flush = nullptr;
  size_t flush_bytes = 0;
};

struct Case {
  const Shape3 sh;
  DeviceTensors t;
  uint16_t* ref = nullptr;
  float* ws = nullptr;
  int* cnt = nullptr;
  uint32_t* sink = nullptr;
};

// Slices of the A slab a CTA needs at most (its units' first to last slice).
int slab_slices_needed(int64_t units, int64_t per_slice, int ctas, int warps) {
  const int64_t total = int64_t(ctas) * warps;
  int most = 0;
  for (int b = 0; b < ctas; ++b) {
    const int64_t lo = int64_t(b) * warps * units / total, hi = int64_t(b + 1) * warps * units / total;
    if (hi > lo) most = std::max(most, static_cast<int>((hi - 1) / per_slice - lo / per_slice + 1));
  }
  return most;
}

template <int V, int kK, int kW>
struct Launch {
  Params q{};
  unsigned grid = 0;
  size_t smem = 0;
  int slab_slices = 0;
  Launch(const Device& d, Case& cs) {
    constexpr int kGs = slice_groups(kK / kGroupK);
    const int panels = cs.sh.n / 16;
    const int slices = (kK / kGroupK) / kGs;
    q.a = cs.t.a.get<uint8_t>();
    q.sfa = cs.t.sfa.get<uint8_t>();
    q.b = cs.t.b.get<uint8_t>();
    q.sfb = cs.t.sfb.get<uint8_t>();
    q.c = cs.t.c.get<uint16_t>();
    q.ws = cs.ws;
    q.cnt = cs.cnt;
    q.sink = cs.sink;
    q.n = cs.sh.n;
    q.panels = panels;
    q.units = int64_t(slices) * panels * kGs;
    grid = static_cast<unsigned>(d.sms);
    if (V == kMma) {
      slab_slices = slab_slices_needed(q.units, int64_t(panels) * kGs, d.sms, kW);
      smem = size_t(slab_slices) * kGs * kSlabGroupBytes;
    }
    auto k = stream_kernel<V, kK, kW>;
    if (smem > 227 * 1024) throw std::runtime_error("A slab over 227 KB: " + std::to_string(smem));
    NVFP4_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  }
  void operator()() const {
    stream_kernel<V, kK, kW><<<grid, kW * 32, smem>>>(q);
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  void describe() const {
    cudaFuncAttributes fa{};
    NVFP4_CUDA_CHECK(cudaFuncGetAttributes(&fa, stream_kernel<V, kK, kW>));
    int blocks = 0;
    NVFP4_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stream_kernel<V, kK, kW>, kW * 32, smem));
    std::printf("    %-8s %d warps/CTA, %u CTAs, %d regs, local %zu B%s, slab %zu KB (%d slices), %d CTA/SM\n",
                kVariantNames[V], kW, grid, fa.numRegs, size_t(fa.localSizeBytes),
                fa.localSizeBytes ? " (LOCAL MEMORY: spills)" : "", smem / 1024, slab_slices, blocks);
    if (blocks < 1) throw std::runtime_error("kernel does not fit on an SM");
  }
};

template <class L>
float median_us(const Device& d, const L& launch, int samples, uint16_t* poison_c, int64_t c_elems) {
  cudaEvent_t e0, e1;
  NVFP4_CUDA_CHECK(cudaEventCreate(&e0));
  NVFP4_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> t;
  for (int i = 0; i < samples + 2; ++i) {  // two warm-up samples
    if (poison_c) poison_device(poison_c, c_elems, nullptr);
    NVFP4_CUDA_CHECK(cudaMemsetAsync(d.flush, 0, d.flush_bytes));
    NVFP4_CUDA_CHECK(cudaEventRecord(e0));
    launch();
    NVFP4_CUDA_CHECK(cudaEventRecord(e1));
    NVFP4_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    NVFP4_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (i >= 2) t.push_back(ms * 1000.0f);
  }
  NVFP4_CUDA_CHECK(cudaEventDestroy(e0));
  NVFP4_CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Check {
  int64_t bit_diff = 0, tol_fail = 0, unwritten = 0;
};

Check compare(const Case& cs) {
  const int64_t elems = int64_t(kM) * cs.sh.n;
  std::vector<uint16_t> got(static_cast<size_t>(elems)), want(static_cast<size_t>(elems));
  NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), cs.t.c.get(), size_t(elems) * 2, cudaMemcpyDeviceToHost));
  NVFP4_CUDA_CHECK(cudaMemcpy(want.data(), cs.ref, size_t(elems) * 2, cudaMemcpyDeviceToHost));
  Check r;
  for (int64_t i = 0; i < elems; ++i) {
    if (got[size_t(i)] == kPoisonFp16) ++r.unwritten;
    if (got[size_t(i)] != want[size_t(i)]) ++r.bit_diff;
    const double x = fp16_bits_to_double(got[size_t(i)]), y = fp16_bits_to_double(want[size_t(i)]);
    if (!(std::fabs(x - y) <= 1e-3 + 1e-3 * std::fabs(y))) ++r.tol_fail;
  }
  return r;
}

// The reference kernel against an exact CPU sum (integer block sums, double scales, one fp16
// rounding) on sampled outputs: bit-identical expected where fp32 sums are exact (GpuMode).
int64_t spot_check_reference(const Case& cs, bool exact) {
  const int k = cs.sh.k, kb = k / 16;
  std::vector<uint8_t> a(static_cast<size_t>(kM) * k / 2), sfa(static_cast<size_t>(kM) * kb);
  std::vector<uint8_t> brow(static_cast<size_t>(k / 2)), srow(static_cast<size_t>(kb));
  NVFP4_CUDA_CHECK(cudaMemcpy(a.data(), cs.t.a.get(), a.size(), cudaMemcpyDeviceToHost));
  NVFP4_CUDA_CHECK(cudaMemcpy(sfa.data(), cs.t.sfa.get(), sfa.size(), cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int sidx = 0; sidx < 48; ++sidx) {
    const int64_t col = (int64_t(sidx) * 7919 * 131) % cs.sh.n;
    NVFP4_CUDA_CHECK(cudaMemcpy(brow.data(), cs.t.b.get<uint8_t>() + col * (k / 2), brow.size(), cudaMemcpyDeviceToHost));
    NVFP4_CUDA_CHECK(cudaMemcpy(srow.data(), cs.t.sfb.get<uint8_t>() + col * kb, srow.size(), cudaMemcpyDeviceToHost));
    for (int m = 0; m < kM; ++m) {
      double sum = 0;
      for (int blk = 0; blk < kb; ++blk) {
        int64_t isum = 0;
        for (int i = 0; i < 16; ++i)
          isum += e2m1_twice(fp4_at(a.data() + size_t(m) * (k / 2), blk * 16 + i)) *
                  e2m1_twice(fp4_at(brow.data(), blk * 16 + i));
        sum += double(scale_decode(sfa[size_t(m) * kb + blk])) * double(scale_decode(srow[size_t(blk)])) *
               double(isum) * 0.25;
      }
      const uint16_t want = fp16_bits_from_double(sum);
      uint16_t got = 0;
      NVFP4_CUDA_CHECK(cudaMemcpy(&got, cs.ref + int64_t(m) * cs.sh.n + col, 2, cudaMemcpyDeviceToHost));
      const double x = fp16_bits_to_double(got), y = fp16_bits_to_double(want);
      if (exact ? got != want : !(std::fabs(x - y) <= 1e-3 + 1e-3 * std::fabs(y))) ++bad;
    }
  }
  return bad;
}

void make_data(Case& cs, Dist dist, uint64_t seed) {
  Problem p;
  p.shape = Shape{kM, cs.sh.n, cs.sh.k, 1};
  p.dist = dist;
  p.seed = seed;
  generate_device(p, cs.t, nullptr);
  const int threads = 256;
  const unsigned blocks = static_cast<unsigned>((int64_t(cs.sh.n) * 16 + threads - 1) / threads);
  reference_kernel<<<blocks, threads>>>(cs.t.a.get<uint8_t>(), cs.t.sfa.get<uint8_t>(), cs.t.b.get<uint8_t>(),
                                        cs.t.sfb.get<uint8_t>(), cs.sh.n, cs.sh.k, cs.ref);
  NVFP4_CUDA_CHECK_LAUNCH();
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
}

template <int kK, int kW>
bool run_shape(const Device& d, int n, int samples) {
  Case cs{Shape3{n, kK}, {}, nullptr, nullptr, nullptr, nullptr};
  cs.t.allocate(Shape{kM, n, kK, 1});
  NVFP4_CUDA_CHECK(cudaMalloc(&cs.ref, size_t(kM) * n * 2));
  NVFP4_CUDA_CHECK(cudaMalloc(&cs.ws, size_t(n) * kM * 4));
  NVFP4_CUDA_CHECK(cudaMalloc(&cs.cnt, size_t(n / 16) * 4));
  NVFP4_CUDA_CHECK(cudaMalloc(&cs.sink, size_t(d.sms) * kW * 4));
  NVFP4_CUDA_CHECK(cudaMemset(cs.ws, 0, size_t(n) * kM * 4));
  NVFP4_CUDA_CHECK(cudaMemset(cs.cnt, 0, size_t(n / 16) * 4));
  const int64_t c_elems = int64_t(kM) * n;
  const double b_bytes = double(n) * kK / 2 + double(n) * kK / 16;
  const double all_bytes = b_bytes + double(kM) * kK / 2 + double(kM) * kK / 16 + double(c_elems) * 2;
  constexpr int kGs = slice_groups(kK / kGroupK);
  std::printf("\n16x%dx%d: B %.1f MB (codes + scales), + A and C %.1f MB; %d groups of 256 K a row, slices of %d, "
              "%lld units over %d warps\n",
              n, kK, b_bytes / 1e6, all_bytes / 1e6, kK / kGroupK, kGs,
              static_cast<long long>(int64_t(kK / kGroupK) * (n / 16)), d.sms * kW);

  make_data(cs, Dist::GpuMode, 1);
  const int64_t ref_bad = spot_check_reference(cs, true);
  std::printf("  reference vs exact CPU sum (48 columns x 16 rows, GpuMode): %s (%lld differ)\n",
              ref_bad ? "FAIL" : "PASS", static_cast<long long>(ref_bad));

  Launch<kLoad, kK, kW> la(d, cs);
  Launch<kDecode, kK, kW> ld(d, cs);
  Launch<kMma, kK, kW> lm(d, cs);
  la.describe();
  ld.describe();
  lm.describe();

  // mma: checked first on a poisoned output, then after the timed samples (each poisoned first)
  poison_device(cs.t.c.get<uint16_t>(), c_elems, nullptr);
  lm();
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  const Check first = compare(cs);

  const float us[3] = {median_us(d, la, samples, nullptr, 0), median_us(d, ld, samples, nullptr, 0),
                       median_us(d, lm, samples, cs.t.c.get<uint16_t>(), c_elems)};
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  const Check after = compare(cs);

  std::printf("  variant   median us   TB/s (B)  %% of 4.8   TB/s (B+A+C)  %% of 4.8   (%d cold samples)\n", samples);
  for (int v = 0; v < 3; ++v) {
    const double tb = b_bytes / (us[v] * 1e-6) / 1e12, ta = all_bytes / (us[v] * 1e-6) / 1e12;
    std::printf("  %-8s  %9.1f   %8.2f  %8.0f   %12.2f  %8.0f%s\n", kVariantNames[v], us[v], tb, 100 * tb / 4.8, ta,
                100 * ta / 4.8, v == kMma ? "" : "   (moves no A, no C)");
  }
  const bool ok_first = first.bit_diff == 0 && first.unwritten == 0;
  const bool ok_after = after.bit_diff == 0 && after.unwritten == 0;
  std::printf("  +mma vs reference, GpuMode seed 1, bit-exact: first launch %s (%lld mismatches, %lld unwritten), "
              "after timing %s (%lld mismatches, %lld unwritten) of %lld\n",
              ok_first ? "PASS" : "FAIL", static_cast<long long>(first.bit_diff),
              static_cast<long long>(first.unwritten), ok_after ? "PASS" : "FAIL",
              static_cast<long long>(after.bit_diff), static_cast<long long>(after.unwritten),
              static_cast<long long>(c_elems));

  make_data(cs, Dist::Normal, 2);
  const int64_t ref_bad_n = spot_check_reference(cs, false);
  poison_device(cs.t.c.get<uint16_t>(), c_elems, nullptr);
  lm();
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  const Check nrm = compare(cs);
  const bool ok_n = nrm.tol_fail == 0 && nrm.unwritten == 0 && ref_bad_n == 0;
  std::printf("  +mma vs reference, Normal seed 2, rtol = atol = 1e-3: %s (%lld mismatches, %lld unwritten, "
              "%lld not bit-identical; reference vs CPU %lld differ)\n",
              ok_n ? "PASS" : "FAIL", static_cast<long long>(nrm.tol_fail), static_cast<long long>(nrm.unwritten),
              static_cast<long long>(nrm.bit_diff), static_cast<long long>(ref_bad_n));

  NVFP4_CUDA_CHECK(cudaFree(cs.ref));
  NVFP4_CUDA_CHECK(cudaFree(cs.ws));
  NVFP4_CUDA_CHECK(cudaFree(cs.cnt));
  NVFP4_CUDA_CHECK(cudaFree(cs.sink));
  return ref_bad == 0 && ok_first && ok_after && ok_n;
}

// One untimed launch of a feed variant with q.check set: the xor of all its folds.
template <class K>
uint32_t fold_xor(K k, unsigned grid, unsigned threads, size_t smem, Params q) {
  uint32_t* d = nullptr;
  NVFP4_CUDA_CHECK(cudaMalloc(&d, 4));
  NVFP4_CUDA_CHECK(cudaMemset(d, 0, 4));
  q.check = d;
  k<<<grid, threads, smem>>>(q);
  NVFP4_CUDA_CHECK_LAUNCH();
  uint32_t h = 0;
  NVFP4_CUDA_CHECK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
  NVFP4_CUDA_CHECK(cudaFree(d));
  return h;
}
uint32_t g_path_xor = 0;  // the path's own loads (feed regs 16 x 3, the first row), what the others must match
bool g_have_path_xor = false;
bool g_feed_ok = true;

// One feed variant at 16x57344x8192-like shapes (K = kK): its kernel timed (one CTA an SM, kW warps,
// `smem` bytes of dynamic shared memory; NaN where it does not fit), its registers, and - where it
// keeps the path's fragments - the xor of its folds (one untimed launch).
struct FeedTiming {
  float us = NAN;
  double tbs = 0;  // TB/s of B's codes and scales
  int regs = 0;
  size_t local = 0;
  bool differs = false;  // its bytes are not the path's
};
template <int kK, class K>
FeedTiming time_feed(const Device& d, Case& cs, int samples, K k, int warps, size_t smem, bool fold_checked) {
  Params q{};
  q.b = cs.t.b.get<uint8_t>();
  q.sfb = cs.t.sfb.get<uint8_t>();
  q.sink = cs.sink;
  q.units = int64_t(cs.sh.n / 16) * (kK / kGroupK);
  if (smem > 0) NVFP4_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaFuncAttributes fa{};
  NVFP4_CUDA_CHECK(cudaFuncGetAttributes(&fa, k));
  int blocks = 0;
  NVFP4_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, warps * 32, smem));
  FeedTiming t;
  t.regs = fa.numRegs;
  t.local = size_t(fa.localSizeBytes);
  if (blocks < 1) return t;
  const unsigned grid = static_cast<unsigned>(d.sms), threads = static_cast<unsigned>(warps * 32);
  const auto launch = [&] {
    k<<<grid, threads, smem>>>(q);
    NVFP4_CUDA_CHECK_LAUNCH();
  };
  t.us = median_us(d, launch, samples, nullptr, 0);
  t.tbs = (double(cs.sh.n) * kK / 2 + double(cs.sh.n) * kK / 16) / (t.us * 1e-6) / 1e12;
  if (fold_checked) {
    const uint32_t x = fold_xor(k, grid, threads, smem, q);
    if (!g_have_path_xor) {  // the first row is the path's own loads
      g_path_xor = x;
      g_have_path_xor = true;
    }
    t.differs = x != g_path_xor;
    if (t.differs) g_feed_ok = false;
  }
  return t;
}
const char* differs_note(const FeedTiming& t) { return t.differs ? "  BYTES DIFFER FROM THE PATH'S" : ""; }

// The feed variants at one shape (K = kK): median us and TB/s of B, each beside the others.
template <int kMode, int kK, int kW, int kDepth>
void feed_row(const Device& d, Case& cs, int samples) {
  const size_t smem = kMode == kAsync ? size_t(kW) * kDepth * kFeedSlotBytes : 0;
  const FeedTiming t = time_feed<kK>(d, cs, samples, feed_kernel<kMode, kK, kW, kDepth>, kW, smem, true);
  const double kb_in_flight = double(kW) * (kDepth - 1) * 16 * (kGroupRowBytes + kGroupRowScales) / 1024;
  std::printf("  %-6s warps %2d depth %2d: %7.1f us  %5.2f TB/s  (%3.0f KB in flight an SM, %3d regs, local %zu B, "
              "smem %3zu KB%s)%s\n",
              kMode == kRegs ? "regs" : "async", kW, kDepth, t.us, t.tbs, kb_in_flight, t.regs, t.local, smem / 1024,
              std::isnan(t.us) ? ", DOES NOT FIT" : "", differs_note(t));
}

template <int kK, int kW, int kB>
void batch_row(const Device& d, Case& cs, int samples) {
  const FeedTiming t = time_feed<kK>(d, cs, samples, batch_kernel<kK, kW, kB>, kW, 0, true);
  std::printf("  batch  warps %2d, %d groups at once: %7.1f us  %5.2f TB/s  (%3.0f KB in flight an SM, %3d regs, local %zu B)%s\n",
              kW, kB, t.us, t.tbs, double(kW) * kB * 16 * (kGroupRowBytes + kGroupRowScales) / 1024, t.regs, t.local,
              differs_note(t));
}

template <int kK, int kW, int kDepth>
void xrun_row(const Device& d, Case& cs, int samples) {
  const size_t smem = size_t(kW) * (kDepth > 0 ? kDepth : 1) * kXSlot;
  const FeedTiming t = time_feed<kK>(d, cs, samples, xrun_kernel<kK, kW, kDepth>, kW, smem, true);
  std::printf("  %s warps %2d depth %d, 512 B a row by cp.async, read back in the path's order: %7.1f us  %5.2f TB/s  "
              "(%3.0f KB in flight an SM, %3d regs, local %zu B, smem %3zu KB)%s\n",
              kDepth > 0 ? "xrun  " : "xhold ", kW, kDepth > 0 ? kDepth : 1, t.us, t.tbs,
              double(kW) * (kDepth > 1 ? kDepth - 1 : 1) * kXSlot / 1024, t.regs, t.local, smem / 1024, differs_note(t));
}

template <int kK, int kRun, int kW, int kDepth>
void run_row(const Device& d, Case& cs, int samples) {
  const FeedTiming t = time_feed<kK>(d, cs, samples, run_kernel<kK, kRun, kW, kDepth>, kW, 0, false);
  std::printf("  run %3d B  warps %2d depth %d: %7.1f us  %5.2f TB/s  (%3.0f KB in flight an SM, %3d regs, local %zu B)\n",
              kRun, kW, kDepth, t.us, t.tbs, double(kW) * (kDepth > 1 ? kDepth - 1 : 1) * 16 * (kRun + kRun / 8) / 1024,
              t.regs, t.local);
}

bool run_feed(const Device& d, int samples) {
  constexpr int kK = 8192, kN = 57344;
  Case cs{Shape3{kN, kK}, {}, nullptr, nullptr, nullptr, nullptr};
  cs.t.allocate(Shape{kM, kN, kK, 1});
  NVFP4_CUDA_CHECK(cudaMalloc(&cs.sink, size_t(d.sms) * 32 * 4));
  Problem p;
  p.shape = Shape{kM, kN, kK, 1};
  p.seed = 3;
  generate_device(p, cs.t, nullptr);
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("\nfeed at 16x%dx%d, the loads alone (B codes + scales, %.1f MB), cold, %d samples:\n", kN, kK,
              (double(kN) * kK / 2 + double(kN) * kK / 16) / 1e6, samples);
  feed_row<kRegs, kK, 16, 3>(d, cs, samples);  // today's loop
  feed_row<kRegs, kK, 16, 4>(d, cs, samples);
  feed_row<kRegs, kK, 8, 6>(d, cs, samples);
  feed_row<kRegs, kK, 8, 8>(d, cs, samples);
  feed_row<kRegs, kK, 32, 2>(d, cs, samples);
  feed_row<kAsync, kK, 16, 3>(d, cs, samples);
  feed_row<kAsync, kK, 16, 4>(d, cs, samples);
  feed_row<kAsync, kK, 16, 6>(d, cs, samples);
  feed_row<kAsync, kK, 8, 8>(d, cs, samples);
  feed_row<kAsync, kK, 8, 12>(d, cs, samples);
  feed_row<kAsync, kK, 32, 3>(d, cs, samples);
  batch_row<kK, 16, 2>(d, cs, samples);
  batch_row<kK, 8, 4>(d, cs, samples);
  batch_row<kK, 8, 6>(d, cs, samples);
  run_row<kK, 128, 16, 3>(d, cs, samples);  // the path's runs, lanes over 4 rows a load
  run_row<kK, 256, 16, 2>(d, cs, samples);
  run_row<kK, 512, 16, 1>(d, cs, samples);
  run_row<kK, 512, 8, 3>(d, cs, samples);
  run_row<kK, 1024, 8, 1>(d, cs, samples);
  xrun_row<kK, 8, 3>(d, cs, samples);
  xrun_row<kK, 12, 2>(d, cs, samples);
  xrun_row<kK, 6, 4>(d, cs, samples);
  xrun_row<kK, 16, 0>(d, cs, samples);  // xhold: one slot a warp, the unit held in registers
  xrun_row<kK, 12, 0>(d, cs, samples);
  {  // the same bytes read in address order: what DRAM gives a plain stream on this card
    const int64_t na = int64_t(kN) * kK / 2 / 16, nb = int64_t(kN) * kK / 16 / 16;
    const auto* a = cs.t.b.get<uint4>();
    const auto* b = cs.t.sfb.get<uint4>();
    const double bytes = double(na + nb) * 16;
    for (int unroll : {2, 4, 8}) {
      const auto launch = [&] {
        if (unroll == 2) plain_read_kernel<2><<<d.sms, 512>>>(a, na, b, nb, cs.sink);
        if (unroll == 4) plain_read_kernel<4><<<d.sms, 512>>>(a, na, b, nb, cs.sink);
        if (unroll == 8) plain_read_kernel<8><<<d.sms, 512>>>(a, na, b, nb, cs.sink);
        NVFP4_CUDA_CHECK_LAUNCH();
      };
      const float us = median_us(d, launch, samples, nullptr, 0);
      std::printf("  plain  16 warps, %d loads of 16 B in flight a thread: %7.1f us  %5.2f TB/s  (%3d KB in flight an SM)\n",
                  unroll, us, bytes / (us * 1e-6) / 1e12, 512 * 16 * unroll / 1024);
    }
  }
  NVFP4_CUDA_CHECK(cudaFree(cs.sink));
  std::printf("  every variant that keeps the path's fragments read the path's bytes: %s\n", g_feed_ok ? "PASS" : "FAIL");
  return g_feed_ok;
}

}  // namespace nvfp4::sm90::streambench

int main(int argc, char** argv) {
  using namespace nvfp4::sm90::streambench;
  const int samples = argc > 1 ? std::atoi(argv[1]) : 30;
  if (samples < 1) {
    std::fprintf(stderr, "samples: %s; expected a positive count\n", argv[1]);
    return 2;
  }
  try {
    cudaDeviceProp prop{};
    NVFP4_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
      std::fprintf(stderr, "sm90_stream_bench needs a compute capability 9.x GPU; this is %s (%d.%d)\n", prop.name,
                   prop.major, prop.minor);
      return 3;
    }
    Device d;
    d.sms = prop.multiProcessorCount;
    d.l2 = size_t(prop.l2CacheSize);
    d.flush_bytes = 2 * d.l2;
    NVFP4_CUDA_CHECK(cudaMalloc(&d.flush, d.flush_bytes));
    int clock_khz = 0;
    NVFP4_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    std::printf("%s, %d SMs, L2 %zu MB, SM clock %d MHz; M = 16, one CTA per SM, cold (2x L2 memset per sample)\n",
                prop.name, d.sms, d.l2 >> 20, clock_khz / 1000);
    bool ok = true;
    ok &= run_shape<8192, 16>(d, 57344, samples);
    ok &= run_shape<16384, 16>(d, 7168, samples);
    ok &= run_shape<7168, 16>(d, 576, samples);
    if (argc > 2 && std::string(argv[2]) == "feed") ok &= run_feed(d, samples);
    NVFP4_CUDA_CHECK(cudaFree(d.flush));
    std::printf("\n%s\n", ok ? "PASS: every check" : "FAIL: see the lines above");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {  // a failed CUDA call (NVFP4_CUDA_CHECK) or a refused launch
    std::fprintf(stderr, "sm90_stream_bench: %s\n", e.what());
    return 3;
  }
}
