// Device kernels that cheat the verdict, built only for the tests (the GPU twins of
// cheat_host.cpp, same names without "-host"): each one's first call is right.
//   lazy        launches its GEMM on its first call only (an empty kernel after it, so a graph
//               captured from it is not empty)
//   memo        caches its output by input address and shape in device memory, copies it back
//   memo-shape  the same, by shape alone
//   fast        a GEMM whose threads return at once unless C[0] holds the tool's poison
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <map>
#include <tuple>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

enum class Cheat { Lazy, Memo, MemoShape, Fast };

struct State {
  explicit State(Cheat c) : cheat(c) {}
  Cheat cheat;
  bool called = false;
  std::map<std::tuple<const void*, int64_t, int64_t, int64_t, int64_t>, void*> memo;
};

// *flag = whether C[0] holds the poison, read before the GEMM overwrites it.
__global__ void read_poison(const uint16_t* c, int* flag) { *flag = c[0] == 0x7F7F; }

__global__ void nothing() {}

__global__ void gemm(nvfp4bench_problem p, nvfp4bench_operands o, const int* only_if) {
  if (only_if && !*only_if) return;
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t l = blockIdx.z;
  if (i >= p.m || j >= p.n) return;
  o.c[(l * p.m + i) * p.n + j] =
      __half_as_ushort(__float2half_rn(nvfp4_example::output_element(p, o, l, i, j, false)));
}

int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void* ws,
            void* stream, char* msg, size_t size) {
  State& st = *static_cast<State*>(user);
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 block(16, 16);
  const dim3 grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16), unsigned(p->l));
  const size_t bytes = size_t(p->l * p->m * p->n) * 2;
  switch (st.cheat) {
    case Cheat::Lazy:
      if (!st.called) gemm<<<grid, block, 0, s>>>(*p, *o, nullptr);
      else nothing<<<1, 1, 0, s>>>();
      st.called = true;
      break;
    case Cheat::Memo:
    case Cheat::MemoShape: {
      const void* at = st.cheat == Cheat::Memo ? static_cast<const void*>(o->a) : nullptr;
      void*& out = st.memo[{at, p->m, p->n, p->k, p->l}];
      if (!out) {
        if (cudaMalloc(&out, bytes) != cudaSuccess) {
          snprintf(msg, size, "cudaMalloc failed");
          return NVFP4BENCH_ERROR;
        }
        gemm<<<grid, block, 0, s>>>(*p, *o, nullptr);
        cudaMemcpyAsync(out, o->c, bytes, cudaMemcpyDeviceToDevice, s);
      } else {
        cudaMemcpyAsync(o->c, out, bytes, cudaMemcpyDeviceToDevice, s);
      }
      break;
    }
    case Cheat::Fast:
      read_poison<<<1, 1, 0, s>>>(o->c, static_cast<int*>(ws));
      gemm<<<grid, block, 0, s>>>(*p, *o, static_cast<const int*>(ws));
      break;
  }
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    snprintf(msg, size, "launch failed: %s", cudaGetErrorString(e));
    return NVFP4BENCH_ERROR;
  }
  return NVFP4BENCH_OK;
}

size_t flag_bytes(void*, const nvfp4bench_problem*) { return sizeof(int); }

State kLazy{Cheat::Lazy}, kMemo{Cheat::Memo}, kMemoShape{Cheat::MemoShape}, kFast{Cheat::Fast};

const nvfp4bench_kernel kKernels[] = {
    {"lazy", "test plugin: right on its first call only", NVFP4BENCH_SPACE_DEVICE, 0, 0, &kLazy,
     nullptr, nullptr, run},
    {"memo", "test plugin: replays its output cached by input address", NVFP4BENCH_SPACE_DEVICE, 0,
     0, &kMemo, nullptr, nullptr, run},
    {"memo-shape", "test plugin: replays its output cached by shape", NVFP4BENCH_SPACE_DEVICE, 0, 0,
     &kMemoShape, nullptr, nullptr, run},
    {"fast", "test plugin: computes only when C holds the poison", NVFP4BENCH_SPACE_DEVICE, 0, 0,
     &kFast, nullptr, flag_bytes, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
