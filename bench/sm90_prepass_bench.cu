// The fused path's A prepass alone (kernels/sm90/prepass.cuh; docs/kernels.md, the history's
// "A prepass forms" row): the shipped forms beside variants, on A operands of the shapes where the
// prepass is a large share of the call (512x512x7168: 6.5-6.9 us of 25.4 by ncu, more than the
// peer's dequantization of the same A):
//   1/plain      RowPerThread, the form fused.cu launches where every row of the tiles is read:
//                one K block per block, every thread stores, global proxy fence
// and this bench's own forms of it (row_variant_kernel below, built from prepass.cuh's steps):
//   1/nofence    the same without fence.proxy.async.global (prices the fence; not correct)
//   1/bulk       one cp.async.bulk store of the block's tile by one thread, no global fence
//   2/..., 4/... two or four K blocks per block (more loads in flight per thread, fewer blocks)
//   1/block4     512 threads a block, one per 16-element scale block (PrepassMap::BlockPerThread,
//                the form fused.cu launches where the M tile leaves rows unread),
//                only the rows the M tile reads written (M rounded up to 16 at M = 16, else 128);
//                compared on those rows
// and the peer's dequantization kernel (src/problem/dequant: row-major fp16, no swizzle) on the
// same A. Each run: L2 flushed (a 256 MB memset), then one launch between two events; the median
// of the runs. Every variant's output is compared byte for byte with 1/plain's, written over a
// poisoned buffer.
// Usage: build-sm90/sm90_prepass_bench [runs, default 30]   (sm_90a; NVFP4_BUILD_BENCH=ON)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <vector>

#include "kernels/sm90/prepass.cuh"
#include "src/device/cuda_check.hpp"
#include "src/problem/dequant.hpp"

namespace nvfp4::sm90::prepassbench {

// How a block's decoded tiles reach global memory:
//   Plain:        every thread stores 16-byte chunks (coalesced), then the global proxy fence
//                 (the shipped kernel's stores);
//   PlainNoFence: the same without the fence - prices it, not correct;
//   Bulk:         one thread copies the block's tiles with cp.async.bulk (the async proxy writes
//                 them, so no global proxy fence) after fence.proxy.async.shared::cta, and waits
//                 for the copies before the block ends.
enum class Store { Plain, PlainNoFence, Bulk };

// RowPerThread over kKb consecutive K blocks a block: each thread loads its row's raw bytes and
// scales for all kKb blocks first (2 kKb 16-byte loads in flight), decodes them into shared
// memory (kKb x kFusedATile bytes, dynamic), then the block stores the tiles (kStore).
template <int kKb, Store kStore>
__global__ void __launch_bounds__(128) row_variant_kernel(const PrepassParams p) {
  prepass_begin(p);
  extern __shared__ __align__(1024) uint4 tiles[];
  const int64_t groups = (p.nk + kKb - 1) / kKb;
  const int64_t blk = blockIdx.x;
  const int64_t g = blk % groups, rest = blk / groups;
  const int64_t tm = rest % p.tiles128, batch = rest / p.tiles128;
  const int kb0 = static_cast<int>(g * kKb);
  const int nkb = p.nk - kb0 < kKb ? p.nk - kb0 : kKb;  // the last group may be short
  const int r = threadIdx.x;
  const int64_t row = tm * 128 + r;
  constexpr int kTileQ = kFusedATile / 16;  // uint4s per tile
  if (row < p.m) {
    const uint8_t* src = p.a + (batch * p.m + row) * (p.k / 2) + int64_t(kb0) * 32;
    const uint8_t* ssrc = p.sfa + (batch * p.m + row) * (p.k / 16) + int64_t(kb0) * 4;
    uint4 lo[kKb], hi[kKb];
    uint32_t sc[kKb];
#pragma unroll
    for (int j = 0; j < kKb; ++j)
      if (j < nkb) {
        lo[j] = __ldg(reinterpret_cast<const uint4*>(src + j * 32));
        hi[j] = __ldg(reinterpret_cast<const uint4*>(src + j * 32 + 16));
        sc[j] = __ldg(reinterpret_cast<const uint32_t*>(ssrc + j * 4));
      }
#pragma unroll
    for (int j = 0; j < kKb; ++j)
      if (j < nkb) prepass_decode_row(lo[j], hi[j], sc[j], tiles + j * kTileQ, r);
  } else {
#pragma unroll
    for (int j = 0; j < kKb; ++j)
      if (j < nkb)
#pragma unroll
        for (int q = 0; q < 8; ++q) tiles[j * kTileQ + r * 8 + q] = make_uint4(0, 0, 0, 0);
  }
  // a16's tiles are in (batch, tile, K block) order: this block's nkb tiles are adjacent
  const int64_t tile0 = (batch * p.tiles128 + tm) * p.nk + kb0;
  if constexpr (kStore == Store::Bulk) {
    ptx::fence_proxy_async_smem();  // generic writes -> the bulk copy's reads
    __syncthreads();
    if (r == 0) {
      ptx::bulk_store(p.a16 + tile0 * int64_t(kFusedATile), ptx::smem_u32(tiles),
                      static_cast<uint32_t>(nkb * kFusedATile));
      ptx::bulk_commit();
      ptx::bulk_wait<0>();
    }
  } else {
    __syncthreads();
    uint4* dst = reinterpret_cast<uint4*>(p.a16 + tile0 * int64_t(kFusedATile));
    for (int j = 0; j < nkb; ++j)
#pragma unroll
      for (int i = 0; i < 8; ++i) dst[j * kTileQ + r + 128 * i] = tiles[j * kTileQ + r + 128 * i];
    if constexpr (kStore == Store::Plain) prepass_fence_for_bulk_reads();
  }
}

struct Setup {
  PrepassParams p{};
  size_t out_bytes = 0;
  uint16_t* f16 = nullptr;  // the peer's row-major output
  void* flush = nullptr;
  size_t flush_bytes = size_t(256) << 20;
};

template <class Launch>
float time_one(const Setup& s, Launch&& launch) {
  cudaEvent_t e0, e1;
  NVFP4_CUDA_CHECK(cudaEventCreate(&e0));
  NVFP4_CUDA_CHECK(cudaEventCreate(&e1));
  NVFP4_CUDA_CHECK(cudaMemsetAsync(s.flush, 0, s.flush_bytes));
  NVFP4_CUDA_CHECK(cudaEventRecord(e0));
  launch();
  NVFP4_CUDA_CHECK(cudaGetLastError());
  NVFP4_CUDA_CHECK(cudaEventRecord(e1));
  NVFP4_CUDA_CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  NVFP4_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  NVFP4_CUDA_CHECK(cudaEventDestroy(e0));
  NVFP4_CUDA_CHECK(cudaEventDestroy(e1));
  return ms * 1000.0f;
}

template <class Launch>
float median_us(const Setup& s, int runs, Launch&& launch) {
  std::vector<float> t;
  for (int i = 0; i < runs + 2; ++i) {
    const float us = time_one(s, launch);
    if (i >= 2) t.push_back(us);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Bytes of a16 that a variant must write: every tile's rows below live_rows (all, for the rest).
bool same_live(const Setup& s, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  const size_t row_bytes = 128, tile = kFusedATile;
  for (size_t t = 0; t < got.size() / tile; ++t) {
    const int64_t tm = int64_t(t / size_t(s.p.nk)) % s.p.tiles128;
    const size_t rows = size_t(prepass_live_in_tile(s.p, tm));
    if (std::memcmp(got.data() + t * tile, want.data() + t * tile, rows * row_bytes) != 0) return false;
  }
  return true;
}

// Kernel k (kKb K blocks a block, `threads` a block) timed and its output checked; BlockPerThread
// (live_only) is compared on the rows it writes.
bool timed(const Setup& s, int runs, const std::vector<uint8_t>& want, const char* name,
           void (*k)(PrepassParams), int kKb, int threads, bool live_only) {
  const size_t smem = size_t(kKb) * kFusedATile;
  NVFP4_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const unsigned blocks = static_cast<unsigned>(s.p.l * s.p.tiles128 * ((s.p.nk + kKb - 1) / kKb));
  const auto launch = [&] { k<<<blocks, threads, smem>>>(s.p); };
  NVFP4_CUDA_CHECK(cudaMemset(s.p.a16, 0xFF, s.out_bytes));  // poisoned
  launch();
  NVFP4_CUDA_CHECK(cudaGetLastError());
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(s.out_bytes);
  NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), s.p.a16, s.out_bytes, cudaMemcpyDeviceToHost));
  const bool same = want.empty() || (live_only ? same_live(s, got, want)
                                                : std::memcmp(got.data(), want.data(), s.out_bytes) == 0);
  const float us = median_us(s, runs, launch);
  std::printf(" | %s %6.2f us (%u blocks)%s", name, us, blocks, same ? "" : " MISMATCH");
  return same;
}

template <PrepassMap kMap>
bool shipped(const Setup& s, int runs, const std::vector<uint8_t>& want, const char* name) {
  return timed(s, runs, want, name, decode_a_kernel<kMap>, 1, prepass_threads<kMap>(),
               kMap == PrepassMap::BlockPerThread);
}

template <int kKb, Store kStore>
bool variant(const Setup& s, int runs, const std::vector<uint8_t>& want, const char* name) {
  return timed(s, runs, want, name, row_variant_kernel<kKb, kStore>, kKb, 128, false);
}

bool shape(int64_t m, int64_t k, int runs, uint64_t seed) {
  Setup s;
  const int64_t nk = k / 64, tiles128 = (m + 127) / 128;
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> a(size_t(m * k / 2)), sf(size_t(m * k / 16));
  for (auto& b : a) b = static_cast<uint8_t>(rng());
  for (auto& b : sf) b = static_cast<uint8_t>(0x28 + rng() % 0x28);  // E4M3 2^-6 .. 2^3: finite fp16 products
  uint8_t *da, *dsf, *d16;
  NVFP4_CUDA_CHECK(cudaMalloc(&da, a.size()));
  NVFP4_CUDA_CHECK(cudaMalloc(&dsf, sf.size()));
  s.out_bytes = size_t(tiles128 * nk) * kFusedATile;
  NVFP4_CUDA_CHECK(cudaMalloc(&d16, s.out_bytes));
  NVFP4_CUDA_CHECK(cudaMalloc(&s.f16, size_t(m * k) * 2));
  NVFP4_CUDA_CHECK(cudaMalloc(&s.flush, s.flush_bytes));
  NVFP4_CUDA_CHECK(cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice));
  NVFP4_CUDA_CHECK(cudaMemcpy(dsf, sf.data(), sf.size(), cudaMemcpyHostToDevice));
  s.p.a = da;
  s.p.sfa = dsf;
  s.p.a16 = d16;
  s.p.m = m;
  s.p.k = k;
  s.p.l = 1;
  s.p.nk = static_cast<int>(nk);
  s.p.tiles128 = static_cast<int>(tiles128);
  s.p.counters = nullptr;
  s.p.ncounters = 0;
  const int64_t mt = m <= 16 ? 16 : 128;  // the fused pick's M tile on these shapes
  s.p.live_rows = (m + mt - 1) / mt * mt;
  std::printf("A %5lldx%-5lld (%6.2f MB fp16 written)", static_cast<long long>(m), static_cast<long long>(k),
              s.out_bytes / 1e6);
  bool ok = true;
  std::vector<uint8_t> want;
  ok &= shipped<PrepassMap::RowPerThread>(s, runs, want, "1/plain");
  want.resize(s.out_bytes);
  NVFP4_CUDA_CHECK(cudaMemcpy(want.data(), s.p.a16, s.out_bytes, cudaMemcpyDeviceToHost));
  ok &= variant<1, Store::PlainNoFence>(s, runs, want, "1/nofence");
  ok &= variant<1, Store::Bulk>(s, runs, want, "1/bulk");
  ok &= variant<2, Store::Plain>(s, runs, want, "2/plain");
  ok &= variant<2, Store::Bulk>(s, runs, want, "2/bulk");
  ok &= variant<4, Store::Plain>(s, runs, want, "4/plain");
  ok &= variant<4, Store::Bulk>(s, runs, want, "4/bulk");
  ok &= shipped<PrepassMap::BlockPerThread>(s, runs, want, "1/block4");
  const float peer = median_us(s, runs, [&] {
    dequantize_nvfp4(da, dsf, m * (k / 16), Dequant16::F16, s.f16, nullptr);
  });
  std::printf(" | peer dequant %6.2f us\n", peer);
  NVFP4_CUDA_CHECK(cudaFree(da));
  NVFP4_CUDA_CHECK(cudaFree(dsf));
  NVFP4_CUDA_CHECK(cudaFree(d16));
  NVFP4_CUDA_CHECK(cudaFree(s.f16));
  NVFP4_CUDA_CHECK(cudaFree(s.flush));
  return ok;
}

}  // namespace nvfp4::sm90::prepassbench

int main(int argc, char** argv) {
  using namespace nvfp4::sm90::prepassbench;
  const int runs = argc > 1 ? std::atoi(argv[1]) : 30;
  if (runs < 1) return 2;
  try {
    cudaDeviceProp prop;
    NVFP4_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs; median of %d cold launches each (events around one launch)\n", prop.name,
                prop.multiProcessorCount, runs);
    bool ok = true;
    const int64_t shapes[][2] = {{16, 7168}, {128, 2048}, {128, 7168}, {128, 16384}, {512, 7168}, {1024, 7168}};
    uint64_t seed = 1;
    for (const auto& sh : shapes) ok &= shape(sh[0], sh[1], runs, seed++);
    std::printf(ok ? "all variants' outputs identical to 1/plain's\n" : "MISMATCH: some variant differs from 1/plain\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {  // a failed CUDA call (NVFP4_CUDA_CHECK)
    std::fprintf(stderr, "sm90_prepass_bench: %s\n", e.what());
    return 3;
  }
}
