// The fused path's consumer K loop alone (docs/kernels.md, "The Hopper kernel (`sm90`)"): the
// ring's stages are filled once with valid-looking data and the producer re-arms each stage as
// soon as it is released, so no memory traffic and no producer work remains. What is left is the
// consumers' chain per 64-wide K block: barrier wait, raw-B loads, decode, wgmma issue,
// wait_group, release. Variants take parts of the chain away to show what each costs:
//   kernel    the fused kernel's loop as it is (runtime stage index, mbarrier wait and release)
//   no-dec    loads kept, decode replaced by the loaded words (the decode's ALU work removed)
//   no-mma    decode kept, no wgmma (fragments kept alive by a register fence)
//   no-sync   no mbarrier wait or release (the stage index still a runtime value)
//   static    no barriers and a 3-stage ring whose index is a compile-time value (one stage per
//             fragment set): the bookkeeping diet's lower bound
//   static-sync  the kernel's waits and releases kept, on a ring of 6 stages (3 at M tile 256,
//             where 6 do not fit) whose period divides the loop's unroll, so every stage index,
//             phase flip and descriptor is a compile-time value: issue 48's chain diet form
//             (bench/notes-sm90.md, open lead 2) with the barriers it cannot drop
//   bare      only the loop, loads and stage arithmetic (no decode, no wgmma, no barriers)
//   unroll12  the kernel's loop unrolled by 12 instead of 3, the kernel's loop body size (about 28
//             KB of SASS): whether instruction fetch costs the kernel's long body anything
//   round2    rounds of two K blocks: both blocks' waits, loads and decodes together, their eight
//             wgmmas in one commit group, one wait_group per round (the kernel's loop otherwise);
//             round2-nomma the same without wgmma. Faster here by 9-16 %, it was not in the
//             kernel (docs/kernels.md, history: "rounds of two K blocks")
// Each CTA runs kBlocks K blocks on one SM (132 CTAs, one per SM, as the kernel runs); the
// figure is cycles per K block of consumer warp 0 (clock64 around the loop), the median over
// CTAs, beside the tensor pipe's floor for the M tile (4 * MT cycles: 2 warpgroups x m64 x MT
// x k64 at 2048 fp16 MACs per cycle per SM).
// Usage: build-sm90/sm90_loop_bench [K blocks, default 2048]   (sm_90a; NVFP4_BUILD_BENCH=ON)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/sm90/decode.hpp"
#include "kernels/sm90/fused_kernel.cuh"
#include "kernels/sm90/ptx.cuh"
#include "kernels/sm90/wgmma.hpp"

namespace nvfp4::sm90::loopbench {

// The one-ring layout this bench measures (one 64-wide K block of fp16 A, raw B and scales per
// stage): the fused kernel's before its B moved to a ring of 4-K-block stages (fused_kernel.cuh).
// The consumer's chain per K block - wait, two 8-byte loads and two scale bytes, decode, four
// wgmma, wait_group, release - is the same in both.
template <int MT>
struct RingCfg {
  static constexpr int kABytes = MT * 128;
  static constexpr int kBBytes = 128 * 32;
  static constexpr int kSBytes = 128 * 4;
  static constexpr int kFit = (227 * 1024 - 1024 - 4 * (MT < 64 ? MT : 64) * 128 - 256) /
                              (kABytes + kBBytes + kSBytes + 16);
  static constexpr int kStages = kFit < 16 ? kFit : 16;
};

enum Variant { kKernel, kNoDec, kNoMma, kNoSync, kStatic, kBare, kUnroll12, kStaticSync, kRound2, kRound2NoMma, kVariants };
const char* const kNames[kVariants] = {"kernel", "no-dec",   "no-mma",      "no-sync", "static",
                                       "bare",   "unroll12", "static-sync", "round2",  "round2-nomma"};

// The ring of the fixed-index variants: static 3 stages; static-sync 6 where they fit, else 3.
template <int MT, int V>
constexpr int fixed_stages() {
  return V == kStaticSync && RingCfg<MT>::kFit >= 6 ? 6 : 3;
}

// The ring in shared memory (ST stages of A, raw B and scales, then full/empty mbarriers), filled
// once: A = fp16 values near 1, B = arbitrary codes, scales = 1.0 (E4M3 0x38). All threads call
// it; it ends with the CTA's barrier.
struct Ring {
  uint32_t sA, sB, sS, full, empty;
};
template <int MT>
__device__ __forceinline__ Ring ring_setup(int ST) {
  using C = RingCfg<MT>;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  Ring r;
  r.sA = base;
  r.sB = r.sA + ST * C::kABytes;
  r.sS = r.sB + ST * C::kBBytes;
  r.full = r.sS + ST * C::kSBytes;
  r.empty = r.full + ST * 8;
  uint8_t* p = smem_raw + (base - raw);
  for (int i = threadIdx.x; i < ST * C::kABytes / 2; i += blockDim.x)
    reinterpret_cast<uint16_t*>(p)[i] = uint16_t(0x3C00u | (i & 0x3F));
  for (int i = threadIdx.x; i < ST * C::kBBytes; i += blockDim.x) p[ST * C::kABytes + i] = uint8_t(i * 37u + 11u);
  for (int i = threadIdx.x; i < ST * C::kSBytes; i += blockDim.x) p[ST * (C::kABytes + C::kBBytes) + i] = 0x38;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      ptx::mbar_init(r.full + s * 8, 1);
      ptx::mbar_init(r.empty + s * 8, 256);  // every consumer thread releases, as the kernel does
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic writes -> wgmma reads
  __syncthreads();
  return r;
}

// This consumer thread's raw-B and scale offsets in a stage (32-byte rows, 4 scale bytes a row):
// rows 64 cw + 16 warp + lane / 4 (and + 8), scale block lane % 4, as the kernel's fragments.
__device__ __forceinline__ int consumer_row(int cw, int tid) { return 64 * cw + 16 * (tid >> 5) + ((tid & 31) >> 2); }
__device__ __forceinline__ uint32_t b_offset(int cw, int tid) { return consumer_row(cw, tid) * 32 + (tid & 3) * 8; }
__device__ __forceinline__ uint32_t s_offset(int cw, int tid) { return consumer_row(cw, tid) * 4 + (tid & 3); }

// The producer: re-arms each stage as soon as it is released, nkb times.
__device__ __forceinline__ void rearm_stages(const Ring& r, int ST, int nkb) {
  int stage = 0;
  uint32_t phase = 0;
  for (int q = 0; q < nkb; ++q) {
    if (q >= ST) ptx::mbar_wait(r.empty + stage * 8, phase ^ 1u);
    ptx::mbar_arrive(r.full + stage * 8);
    if (++stage == ST) {
      stage = 0;
      phase ^= 1u;
    }
  }
}

template <int MT, int V>
__global__ void __launch_bounds__(384, 1) loop_kernel(int nkb, long long* cycles, float* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  namespace fd = ptx;
  using C = RingCfg<MT>;
  constexpr bool kDecode =
      V == kKernel || V == kNoMma || V == kNoSync || V == kStatic || V == kUnroll12 || V == kStaticSync;
  constexpr bool kMma = V != kNoMma && V != kBare;
  constexpr bool kSync = V == kKernel || V == kNoDec || V == kNoMma || V == kUnroll12 || V == kStaticSync;
  constexpr bool kFixed = V == kStatic || V == kStaticSync;
  constexpr int ST = kFixed ? fixed_stages<MT, V>() : C::kStages;
  const Ring ring = ring_setup<MT>(ST);
  const uint32_t sA = ring.sA, sB = ring.sB, sS = ring.sS, full = ring.full, empty = ring.empty;
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    fd::setmaxnreg_dec<40>();
    if (kSync && threadIdx.x == 0) rearm_stages(ring, ST, nkb);
    return;
  }
  fd::setmaxnreg_inc<232>();
  const int cw = wg - 1, tid = threadIdx.x & 127;
  const uint32_t bofs = b_offset(cw, tid), sofs = s_offset(cw, tid);
  int stage = 0, rel = 0;
  uint32_t phase = 0;
  float acc[MT / 2];
  uint32_t fr[3][4][4];
#pragma unroll
  for (int i = 0; i < MT / 2; ++i) acc[i] = 0.0f;
  auto release_oldest = [&] {
    fd::mbar_arrive(empty + rel * 8);
    if (++rel == ST) rel = 0;
  };
  // static-sync: the stage loaded is a compile-time value; the phase flips where it wraps to 0
  // (never for the first block, loaded before the loop).
  bool first = true;
  auto load_decode = [&](uint32_t(&f)[4][4], int fixed_stage) {
    const int st = kFixed ? fixed_stage : stage;
    if (kFixed && kSync) {
      if (st == 0 && !first) phase ^= 1u;
      first = false;
    }
    if (kSync) fd::mbar_wait(full + st * 8, phase);
    if (!kFixed && ++stage == ST) {
      stage = 0;
      phase ^= 1u;
    }
    const uint32_t b = sB + st * C::kBBytes + bofs;
    const uint2 w0 = fd::ld_shared_v2(b), w1 = fd::ld_shared_v2(b + 8 * 32);
    const uint32_t s = sS + st * C::kSBytes + sofs;
    const uint32_t sc = fd::ld_shared_u8(s) | (fd::ld_shared_u8(s + 8 * 4) << 8);
    if (kDecode) {
      decode_frag(w0, w1, sc, f);
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        f[k][0] = w0.x + k;
        f[k][1] = w1.x + sc;
        f[k][2] = w0.y;
        f[k][3] = w1.y;
      }
    }
    return st;
  };
  const long long t0 = clock64();
  int cur = load_decode(fr[0], 0);
  // next_stage: the stage of block i + 1 (fixed-index variants; the others keep a run-time index)
  auto step = [&](int i, uint32_t(&f)[4][4], uint32_t(&fn)[4][4], int next_stage) {
    fd::fence_regs(f);
    if (kFixed) cur = (next_stage + ST - 1) % ST;  // block i's stage, a compile-time value
    if (kMma) {
      const uint64_t d0 = make_kmajor_sw128_desc(sA + cur * C::kABytes).pack();
      fd::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) Wgmma<MT>::mma(acc, f[s], d0 + wgmma_desc_advance(32 * s));
      fd::wgmma_commit();
    }
    if (i + 1 < nkb) cur = load_decode(fn, next_stage);
    if (kMma) fd::wgmma_wait<1>();
    if (kSync && i >= 1) {
      if (kFixed) fd::mbar_arrive(empty + ((next_stage + ST - 2) % ST) * 8);  // block i - 1's stage
      else release_oldest();
    }
  };
  // unroll12: the kernel's loop body size; static-sync: one pass of its ring (6 or 3 blocks)
  constexpr int kUnroll = V == kUnroll12 ? 12 : V == kStaticSync ? ST : 3;
  // (a goto leaves both loops: a flag tested in the inner loop lengthened every variant's chain)
  for (int i = 0;; i += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; u += 3) {
      step(i + u, fr[0], fr[1], (u + 1) % ST);
      if (i + u + 1 >= nkb) goto done;
      step(i + u + 1, fr[1], fr[2], (u + 2) % ST);
      if (i + u + 2 >= nkb) goto done;
      step(i + u + 2, fr[2], fr[0], (u + 3) % ST);
      if (i + u + 3 >= nkb) goto done;
    }
  }
done:
  if (kMma) fd::wgmma_wait<0>();
  fd::fence_regs(acc);
  if (kSync && kFixed) fd::mbar_arrive(empty + ((nkb - 1) % ST) * 8);  // the last block's stage
  else if (kSync) release_oldest();
  const long long t1 = clock64();
  if (tid == 0 && cw == 0) cycles[blockIdx.x] = t1 - t0;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < MT / 2; ++i) s += acc[i];
  if (!kMma) {
    uint32_t x = 0;
#pragma unroll
    for (int k = 0; k < 3; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) x ^= fr[k][j][0] ^ fr[k][j][1] ^ fr[k][j][2] ^ fr[k][j][3];
    s += float(x & 1u);
  }
  if (s == 1.2345f) sink[threadIdx.x] = s;  // keeps the work alive; never true in practice
#else
  (void)nkb;
  (void)cycles;
  (void)sink;
#endif
}

// Rounds of two K blocks (variants round2, round2-nomma): the same ring, barriers and decode, but
// a round waits for both its stages, loads both blocks' raw B, decodes both (independent work the
// compiler can interleave), issues both blocks' eight wgmmas as one commit group, and retires the
// previous round with one wait_group 1. Three fragment sets of two blocks each.
template <int MT, int V>
__global__ void __launch_bounds__(384, 1) round_kernel(int nkb, long long* cycles, float* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  namespace fd = ptx;
  using C = RingCfg<MT>;
  constexpr bool kMma = V == kRound2;
  constexpr int ST = C::kStages;
  const Ring ring = ring_setup<MT>(ST);
  const uint32_t sA = ring.sA, sB = ring.sB, sS = ring.sS, full = ring.full, empty = ring.empty;
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    fd::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) rearm_stages(ring, ST, nkb);
    return;
  }
  fd::setmaxnreg_inc<232>();
  const int cw = wg - 1, tid = threadIdx.x & 127;
  const uint32_t bofs = b_offset(cw, tid), sofs = s_offset(cw, tid);
  int stage = 0, rel = 0;
  uint32_t phase = 0;
  float acc[MT / 2];
  uint32_t fr[3][2][4][4];
#pragma unroll
  for (int i = 0; i < MT / 2; ++i) acc[i] = 0.0f;
  auto release_oldest = [&] {
    fd::mbar_arrive(empty + rel * 8);
    if (++rel == ST) rel = 0;
  };
  auto next_stage = [&] {
    const int st = stage;
    fd::mbar_wait(full + st * 8, phase);
    if (++stage == ST) {
      stage = 0;
      phase ^= 1u;
    }
    return st;
  };
  int cur0 = 0, cur1 = 0;
  auto load2 = [&](uint32_t(&f)[2][4][4]) {
    const int s0 = next_stage(), s1 = next_stage();
    const uint32_t b0 = sB + s0 * C::kBBytes + bofs, b1 = sB + s1 * C::kBBytes + bofs;
    const uint2 w00 = fd::ld_shared_v2(b0), w01 = fd::ld_shared_v2(b0 + 8 * 32);
    const uint2 w10 = fd::ld_shared_v2(b1), w11 = fd::ld_shared_v2(b1 + 8 * 32);
    const uint32_t t0 = sS + s0 * C::kSBytes + sofs, t1 = sS + s1 * C::kSBytes + sofs;
    const uint32_t sc0 = fd::ld_shared_u8(t0) | (fd::ld_shared_u8(t0 + 8 * 4) << 8);
    const uint32_t sc1 = fd::ld_shared_u8(t1) | (fd::ld_shared_u8(t1 + 8 * 4) << 8);
    decode_frag(w00, w01, sc0, f[0]);
    decode_frag(w10, w11, sc1, f[1]);
    cur0 = s0;
    cur1 = s1;
  };
  const long long t0 = clock64();
  load2(fr[0]);
  auto round = [&](int r, uint32_t(&f)[2][4][4], uint32_t(&fn)[2][4][4]) {
    fd::fence_regs(f[0]);
    fd::fence_regs(f[1]);
    if (kMma) {
      const uint64_t d0 = make_kmajor_sw128_desc(sA + cur0 * C::kABytes).pack();
      const uint64_t d1 = make_kmajor_sw128_desc(sA + cur1 * C::kABytes).pack();
      fd::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) Wgmma<MT>::mma(acc, f[0][s], d0 + wgmma_desc_advance(32 * s));
#pragma unroll
      for (int s = 0; s < 4; ++s) Wgmma<MT>::mma(acc, f[1][s], d1 + wgmma_desc_advance(32 * s));
      fd::wgmma_commit();
    }
    if (2 * r + 2 < nkb) load2(fn);
    if (kMma) fd::wgmma_wait<1>();
    if (r >= 1) {
      release_oldest();
      release_oldest();
    }
  };
  const int nr = nkb / 2;  // nkb even (main() asks for it)
  for (int r = 0;; r += 3) {
    round(r, fr[0], fr[1]);
    if (r + 1 >= nr) break;
    round(r + 1, fr[1], fr[2]);
    if (r + 2 >= nr) break;
    round(r + 2, fr[2], fr[0]);
    if (r + 3 >= nr) break;
  }
  if (kMma) fd::wgmma_wait<0>();
  fd::fence_regs(acc);
  release_oldest();
  release_oldest();
  const long long t1 = clock64();
  if (tid == 0 && cw == 0) cycles[blockIdx.x] = t1 - t0;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < MT / 2; ++i) s += acc[i];
  uint32_t x = 0;
#pragma unroll
  for (int k = 0; k < 3; ++k)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < 4; ++j) x ^= fr[k][h][j][0] ^ fr[k][h][j][1] ^ fr[k][h][j][2] ^ fr[k][h][j][3];
  s += float(x & 1u);
  if (s == 1.2345f) sink[threadIdx.x] = s;
#else
  (void)nkb;
  (void)cycles;
  (void)sink;
#endif
}

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

template <int MT, int V>
void run_one(int nkb, int sms, long long* d_cycles, float* d_sink) {
  using C = RingCfg<MT>;
  const int st = V == kStatic || V == kStaticSync ? fixed_stages<MT, V>() : C::kStages;
  const size_t smem = 1024 + size_t(st) * (C::kABytes + C::kBBytes + C::kSBytes + 16);
  auto k = [] {
    if constexpr (V >= kRound2) return round_kernel<MT, V>;
    else return loop_kernel<MT, V>;
  }();
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  k<<<sms, 384, smem>>>(nkb, d_cycles, d_sink);  // warm-up
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  std::vector<long long> cyc(static_cast<size_t>(sms)), med;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(e0));
    k<<<sms, 384, smem>>>(nkb, d_cycles, d_sink);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
    CHECK(cudaMemcpy(cyc.data(), d_cycles, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(cyc.begin(), cyc.end());
    med.push_back(cyc[cyc.size() / 2]);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(med.begin(), med.end());
  const double per_block = double(med[med.size() / 2]) / nkb;
  std::printf("%4d  %-8s  %7.1f  %7d  %5.2fx  %9.1f\n", MT, kNames[V], per_block, 4 * MT,
              per_block / (4.0 * MT), 1000.0 * ms[ms.size() / 2]);
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
}

template <int MT>
void run_all(int nkb, int sms, long long* c, float* s) {
  run_one<MT, kKernel>(nkb, sms, c, s);
  run_one<MT, kNoDec>(nkb, sms, c, s);
  run_one<MT, kNoMma>(nkb, sms, c, s);
  run_one<MT, kNoSync>(nkb, sms, c, s);
  run_one<MT, kStatic>(nkb, sms, c, s);
  run_one<MT, kBare>(nkb, sms, c, s);
  run_one<MT, kUnroll12>(nkb, sms, c, s);
  run_one<MT, kStaticSync>(nkb, sms, c, s);
  if constexpr (MT <= 128) {  // three sets of two blocks' fragments beside the accumulators
    run_one<MT, kRound2>(nkb, sms, c, s);
    run_one<MT, kRound2NoMma>(nkb, sms, c, s);
  }
}

}  // namespace nvfp4::sm90::loopbench

int main(int argc, char** argv) {
  using namespace nvfp4::sm90::loopbench;
  const int nkb = argc > 1 ? std::atoi(argv[1]) : 2048;
  if (nkb < 4 || nkb % 2 != 0) {
    std::fprintf(stderr, "K blocks: %d; expected an even number, at least 4\n", nkb);
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::fprintf(stderr, "sm90_loop_bench needs a compute capability 9.x GPU; this is %s (%d.%d)\n",
                 prop.name, prop.major, prop.minor);
    return 3;
  }
  long long* cycles = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&cycles, sizeof(long long) * size_t(prop.multiProcessorCount)));
  CHECK(cudaMalloc(&sink, sizeof(float) * 384));
  std::printf("%s, %d SMs, %d K blocks per CTA, one CTA per SM\n", prop.name, prop.multiProcessorCount, nkb);
  std::printf("  MT  variant   cyc/Kblk  tensor  ratio  kernel us\n");
  run_all<16>(nkb, prop.multiProcessorCount, cycles, sink);
  run_all<32>(nkb, prop.multiProcessorCount, cycles, sink);
  run_all<64>(nkb, prop.multiProcessorCount, cycles, sink);
  run_all<128>(nkb, prop.multiProcessorCount, cycles, sink);
  run_all<256>(nkb, prop.multiProcessorCount, cycles, sink);
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(sink));
  return 0;
}
