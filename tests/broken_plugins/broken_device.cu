// Deliberately broken device kernels, built only for the tests (GPU tests and
// scripts/device/sanitize.sh): each computes C correctly, then breaks it (or, broken-race, the
// kernel's own shared memory) in one known way.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

enum class Fault { Oob, OobEdge, Nan, Unwritten, Hang, Race };

__global__ void gemm_rows(nvfp4bench_problem p, nvfp4bench_operands o, int64_t rows) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t l = blockIdx.z;
  if (i >= rows || j >= p.n) return;
  const float v = nvfp4_example::output_element(p, o, l, i, j, false);
  o.c[(l * p.m + i) * p.n + j] = __half_as_ushort(__float2half_rn(v));
}

// One store at element `offset` of C: a quiet NaN (offset 0), one past the end (caught only by
// compute-sanitizer: it lands inside the allocation's granule), or 2 TiB away (faults).
__global__ void poke(uint16_t* c, int64_t offset) { c[offset] = 0x7E00; }

// Spins until *flag becomes nonzero, which nothing ever does.
__global__ void spin(volatile int* flag) {
  while (*flag == 0) {
  }
}

// A shared-memory race that leaves C alone: warp 0 writes a slot that warp 1 reads with no
// barrier between them (only compute-sanitizer racecheck sees it); the sum goes to the
// workspace so the compiler keeps both.
__global__ void race(int* out) {
  __shared__ int slot[32];
  const int lane = threadIdx.x & 31;
  if (threadIdx.x < 32) slot[lane] = lane + 1;
  else out[0] = slot[lane];
}

int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void* ws,
            void* stream, char* msg, size_t size) {
  const auto st = static_cast<cudaStream_t>(stream);
  const Fault f = *static_cast<const Fault*>(user);
  const dim3 block(16, 16);
  const dim3 grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16), unsigned(p->l));
  gemm_rows<<<grid, block, 0, st>>>(*p, *o, f == Fault::Unwritten ? p->m - 1 : p->m);
  const int64_t c_elems = p->l * p->m * p->n;
  switch (f) {
    case Fault::Oob: poke<<<1, 1, 0, st>>>(o->c, int64_t(1) << 40); break;
    case Fault::OobEdge: poke<<<1, 1, 0, st>>>(o->c, c_elems); break;
    case Fault::Nan: poke<<<1, 1, 0, st>>>(o->c, 0); break;
    case Fault::Hang:
      cudaMemsetAsync(ws, 0, sizeof(int), st);
      spin<<<1, 1, 0, st>>>(static_cast<volatile int*>(ws));
      break;
    case Fault::Race: race<<<1, 64, 0, st>>>(static_cast<int*>(ws)); break;
    case Fault::Unwritten: break;
  }
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    snprintf(msg, size, "launch failed: %s", cudaGetErrorString(e));
    return NVFP4BENCH_ERROR;
  }
  return NVFP4BENCH_OK;
}

size_t flag_bytes(void*, const nvfp4bench_problem*) { return sizeof(int); }

Fault kOob = Fault::Oob, kOobEdge = Fault::OobEdge, kNan = Fault::Nan,
      kUnwritten = Fault::Unwritten, kHang = Fault::Hang, kRace = Fault::Race;

const nvfp4bench_kernel kKernels[] = {
    {"broken-oob", "test plugin: stores 2 TiB past C (faults)", NVFP4BENCH_SPACE_DEVICE, 0, 0,
     &kOob, nullptr, nullptr, run},
    {"broken-oob-edge", "test plugin: stores one element past C (compute-sanitizer finds it)",
     NVFP4BENCH_SPACE_DEVICE, 0, 0, &kOobEdge, nullptr, nullptr, run},
    {"broken-nan", "test plugin: writes one NaN", NVFP4BENCH_SPACE_DEVICE, 0, 0, &kNan, nullptr,
     nullptr, run},
    {"broken-unwritten", "test plugin: leaves the last row unwritten", NVFP4BENCH_SPACE_DEVICE, 0,
     0, &kUnwritten, nullptr, nullptr, run},
    {"broken-hang", "test plugin: a kernel that never ends", NVFP4BENCH_SPACE_DEVICE, 0, 0, &kHang,
     nullptr, flag_bytes, run},
    {"broken-race", "test plugin: a shared-memory race beside a right C (compute-sanitizer racecheck finds it)",
     NVFP4BENCH_SPACE_DEVICE, 0, 0, &kRace, nullptr, flag_bytes, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
