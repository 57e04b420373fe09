// The streaming loop's device pieces (the small-M path, stream_kernel.cuh, and its model test,
// bench/sm90_stream_bench.cu): B streamed from global memory straight into registers, one group
// (4 K blocks, 256 K) of a 16-row panel at a time, decoded with decode_frag and fed to mma.sync.
//
// Lane (g, c) = (lane / 4, lane % 4) loads rows g and g + 8 of the panel: 16-byte chunks c and
// 4 + c of each row's 128 group bytes (one load instruction reads 64 contiguous bytes a row, whole
// sectors), i.e. scale blocks {2c, 2c+1} and {8+2c, 9+2c} of the group's 16, and their four scale
// bytes as two 16-bit loads a row. The natural layout is used as it is by permuting K inside a
// group: in "virtual" K block j lane c decodes scale block 2c + (j & 1) + 8 (j >> 1), whose 16 K
// land on the mma's k indices in decode_frag's order; A is laid out in the same order (its slab),
// which is all a K permutation of a dot product needs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/sm90/decode.hpp"

namespace nvfp4::sm90::streamloop {

// Streamed once: no L1 allocation.
__device__ __forceinline__ uint4 ldg_stream(const uint8_t* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}
// Scale bytes: a 16-byte row segment read by 8 loads of 4 lanes each, so through L1.
__device__ __forceinline__ uint32_t ldg_u16(const uint8_t* p) {
  return __ldg(reinterpret_cast<const unsigned short*>(p));
}

// D += A B, m16n8k16, fp16 inputs, FP32 accumulators (row.col: A's rows, B's columns).
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One group of a lane's B bytes (see above).
struct Buf {
  uint4 g0, g1, h0, h1;         // row g chunk c, row g chunk 4+c, row g+8 chunk c, row g+8 chunk 4+c
  uint32_t sg0, sg1, sh0, sh1;  // scale bytes {2c, 2c+1}, {8+2c, 9+2c} of row g, then of row g+8
};

// cp / sp: row g's chunk c and scale pair 2c of the group; row g + 8 is `dc` / `ds` bytes further
// (8 rows, or fewer where the panel passes N and its rows are clamped to the last).
__device__ __forceinline__ void load_group(Buf& b, const uint8_t* cp, const uint8_t* sp, int dc, int ds) {
  b.g0 = ldg_stream(cp);
  b.g1 = ldg_stream(cp + 64);
  b.h0 = ldg_stream(cp + dc);
  b.h1 = ldg_stream(cp + dc + 64);
  b.sg0 = ldg_u16(sp);
  b.sg1 = ldg_u16(sp + 8);
  b.sh0 = ldg_u16(sp + ds);
  b.sh1 = ldg_u16(sp + ds + 8);
}

// Virtual K block J (0..3) of a group: lane c's raw words of scale block 2c + (J & 1) + 8 (J >> 1)
// of rows g (w0) and g + 8 (w1).
template <int J>
__device__ __forceinline__ void block_raw(const Buf& b, uint2& w0, uint2& w1) {
  const uint4& r0 = (J >> 1) ? b.g1 : b.g0;
  const uint4& r1 = (J >> 1) ? b.h1 : b.h0;
  w0 = (J & 1) ? make_uint2(r0.z, r0.w) : make_uint2(r0.x, r0.y);
  w1 = (J & 1) ? make_uint2(r1.z, r1.w) : make_uint2(r1.x, r1.y);
}

// Runs (the feed model test's xrun and xhold variants, bench/sm90_stream_bench.cu): up to
// kRunGroups consecutive groups of one 16-row panel go by cp.async into a warp's slot, one
// instruction per row over the run's bytes (512 B a whole run: runs of a row this long are what
// DRAM serves at the rate of a plain stream, the path's own 64-byte pieces of 8 rows 7-9 % below
// it; bench/notes-sm90-stream.md), and the rows' scale bytes (16 a group) after them. Lane l
// copies bytes 16l..16l+15 of each row's run, i.e. chunk l % 8 of group l / 8, to chunk
// l ^ 4 (row & 1) of the row's 512 bytes, so that a quarter-warp's reads below (rows of one
// parity) fall in distinct banks. run_read then gives each lane what load_group would have: rows
// g and g + 8, chunks c and 4 + c, the scale pairs. (The path's own feed through such slots was
// tried and not kept: docs/kernels.md, the streaming path.)
constexpr int kRunGroups = 4;
constexpr int kRunRow = kRunGroups * 128;                  // code bytes of a row
constexpr int kRunScaleRow = kRunGroups * 16;              // scale bytes of a row
constexpr int kRunSlot = 16 * kRunRow + 16 * kRunScaleRow;  // 9 KB: codes, then scales

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Until at most N of this thread's committed groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Row j's destination of lane `lane`'s 16 bytes in a slot (shared-space address `slot`).
__device__ __forceinline__ uint32_t run_code_dst(uint32_t slot, int j, int lane) {
  return slot + j * kRunRow + 16 * (lane ^ (4 * (j & 1)));
}
// Scale bytes of row r, group G of the run.
__device__ __forceinline__ uint32_t run_scale_dst(uint32_t slot, int r, int G) {
  return slot + 16 * kRunRow + r * kRunScaleRow + 16 * G;
}
// A lane's offsets in a slot, formed once: chunk (8G + c) ^ sw of row g is 8G + (c | sw) (sw is
// bit 2, c bits 0-1), so a group's reads are [offset + immediate].
struct RunLane {
  int c0, c1, s;  // row g's chunks c and 4 + c of group 0; its scale pair of group 0
};
__device__ __forceinline__ RunLane run_lane(int g, int c) {
  const int sw = 4 * (g & 1);  // rows g and g + 8 share their parity
  return {g * kRunRow + 16 * (c | sw), g * kRunRow + 16 * (c | (4 ^ sw)), 16 * kRunRow + g * kRunScaleRow + 2 * c};
}
// Group G of the run in `slot` as lane (g, c) holds it (load_group's fields).
template <int G>
__device__ __forceinline__ void run_read(const uint8_t* slot, const RunLane& o, Buf& b) {
  b.g0 = *reinterpret_cast<const uint4*>(slot + o.c0 + 128 * G);
  b.g1 = *reinterpret_cast<const uint4*>(slot + o.c1 + 128 * G);
  b.h0 = *reinterpret_cast<const uint4*>(slot + o.c0 + 8 * kRunRow + 128 * G);
  b.h1 = *reinterpret_cast<const uint4*>(slot + o.c1 + 8 * kRunRow + 128 * G);
  b.sg0 = *reinterpret_cast<const uint16_t*>(slot + o.s + 16 * G);
  b.sg1 = *reinterpret_cast<const uint16_t*>(slot + o.s + 16 * G + 8);
  b.sh0 = *reinterpret_cast<const uint16_t*>(slot + o.s + 8 * kRunScaleRow + 16 * G);
  b.sh1 = *reinterpret_cast<const uint16_t*>(slot + o.s + 8 * kRunScaleRow + 16 * G + 8);
}

// The same with the block's two scale bytes: the decode_frag inputs (the model test's form).
template <int J>
__device__ __forceinline__ void block_words(const Buf& b, uint2& w0, uint2& w1, uint32_t& sc01) {
  block_raw<J>(b, w0, w1);
  // decode_frag wants row g's scale byte low, row g+8's next
  sc01 = __byte_perm((J >> 1) ? b.sg1 : b.sg0, (J >> 1) ? b.sh1 : b.sh0, (J & 1) ? 0x0051 : 0x0040);
}

// The slab: per group, virtual K block j, row m of A and lane column c, 32 bytes = the mma
// B-operand registers of lane (g = m % 8, c) for k-steps 0..3 (word 2s = K {s, s+4} of the scale
// block, word 2s+1 = K {8+s, 12+s}: decode_frag's order), in two 16-byte halves (k-steps 0-1,
// 2-3) swapped on odd rows so that 8 lanes of an LDS.128 hit 8 different bank groups. One K
// block of `rows` rows is rows x 128 bytes.
// The 32 bytes of row m, lane column c, for A's 8 raw bytes `w` of scale block sb and its scale.
__device__ __forceinline__ void slab_entry(uint8_t* block, int m, int c, uint2 w, uint32_t scale) {
  const uint32_t ms = scale2_fp16(scale | (scale << 8));
  const uint4 lo = make_uint4(hmul2_bits(e2m1x2_raw<0>(w.x), ms), hmul2_bits(e2m1x2_raw<0>(w.y), ms),
                              hmul2_bits(e2m1x2_raw<1>(w.x), ms), hmul2_bits(e2m1x2_raw<1>(w.y), ms));
  const uint4 hi = make_uint4(hmul2_bits(e2m1x2_raw<2>(w.x), ms), hmul2_bits(e2m1x2_raw<2>(w.y), ms),
                              hmul2_bits(e2m1x2_raw<3>(w.x), ms), hmul2_bits(e2m1x2_raw<3>(w.y), ms));
  uint8_t* dst = block + m * 128 + c * 32;
  const int sw = (m & 1) * 16;
  *reinterpret_cast<uint4*>(dst + sw) = lo;
  *reinterpret_cast<uint4*>(dst + (16 - sw)) = hi;
}
__device__ __forceinline__ void slab_zero(uint8_t* block, int m, int c) {
  uint4* dst = reinterpret_cast<uint4*>(block + m * 128 + c * 32);
  dst[0] = make_uint4(0, 0, 0, 0);
  dst[1] = make_uint4(0, 0, 0, 0);
}
// Scale block of the group that lane column c decodes in virtual K block j.
__device__ __forceinline__ int virtual_block(int j, int c) { return 2 * c + (j & 1) + 8 * (j >> 1); }

// A group's scale multipliers (the scales, fp16x2): blocks {2c, 2c+1} and {8+2c, 9+2c} of row g
// (g0, g1) and of row g + 8 (h0, h1); virtual K block J takes half J & 1 of g(J >> 1) and
// h(J >> 1). Converted once a group, not once a block.
struct GroupScales {
  uint32_t g0, g1, h0, h1;
};
__device__ __forceinline__ GroupScales group_scales(const Buf& b) {
  return {scale2_fp16(b.sg0), scale2_fp16(b.sg1), scale2_fp16(b.sh0), scale2_fp16(b.sh1)};
}

// One virtual K block: decode the lane's B fragment and multiply it with NT n8 tiles of the slab.
// a0 / a1: the lane's k-steps 0-1 and 2-3 in row g of tile 0 of the block (the block's slab bytes
// plus the lane's two offsets, formed once a group so that every load here is [register +
// immediate]).
template <int J, int NT>
__device__ __forceinline__ void mma_block(const Buf& b, const GroupScales& sc, const uint8_t* a0, const uint8_t* a1,
                                          float (&acc)[NT][4]) {
  uint2 w0, w1;
  block_raw<J>(b, w0, w1);
  const uint32_t mg = (J >> 1) ? sc.g1 : sc.g0, mh = (J >> 1) ? sc.h1 : sc.h0;
  uint32_t f[4][4];
  decode_frag_m(w0, w1, (J & 1) ? bcast_hi(mg) : bcast_lo(mg), (J & 1) ? bcast_hi(mh) : bcast_lo(mh), f);
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    const uint4 x0 = *reinterpret_cast<const uint4*>(a0 + t * 1024);
    const uint4 x1 = *reinterpret_cast<const uint4*>(a1 + t * 1024);
    mma16816(acc[t], f[0], x0.x, x0.y);
    mma16816(acc[t], f[1], x0.z, x0.w);
    mma16816(acc[t], f[2], x1.x, x1.y);
    mma16816(acc[t], f[3], x1.z, x1.w);
  }
}

}  // namespace nvfp4::sm90::streamloop
