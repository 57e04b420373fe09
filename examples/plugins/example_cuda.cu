// An example plugin with one device kernel, `example-cuda`: one thread per output, scales read
// from the blocked layout (the one tensor-core kernels consume), FP32 accumulation. It shows
// the optional callbacks: a shape check (grid limits) and a workspace (one float per row of
// the first batch, written so that the pointer is exercised).
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>

#include "example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

constexpr int64_t kMaxGridYZ = 65535;  // the grid's y and z dimensions bound M and L
constexpr int kTile = 16;

__global__ void example_kernel(nvfp4bench_problem p, nvfp4bench_operands o, float* row_sums) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t l = blockIdx.z;
  if (i >= p.m || j >= p.n) return;
  const float v = nvfp4_example::output_element(p, o, l, i, j, /*blocked=*/true);
  o.c[(l * p.m + i) * p.n + j] = __half_as_ushort(__float2half_rn(v));
  if (j == 0 && l == 0) row_sums[i] = v;
}

int32_t shape_check(void*, const nvfp4bench_problem* p, char* msg, size_t size) {
  if (p->l > kMaxGridYZ) {
    snprintf(msg, size, "L must be at most %lld (grid z limit)", (long long)kMaxGridYZ);
    return NVFP4BENCH_UNSUPPORTED;
  }
  if ((p->m + kTile - 1) / kTile > kMaxGridYZ) {
    snprintf(msg, size, "M must be at most %lld (grid y limit)", (long long)(kMaxGridYZ * kTile));
    return NVFP4BENCH_UNSUPPORTED;
  }
  return NVFP4BENCH_OK;
}

size_t workspace_bytes(void*, const nvfp4bench_problem* p) { return size_t(p->m) * sizeof(float); }

int32_t run(void*, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void* ws,
            void* stream, char* msg, size_t size) {
  const dim3 block(kTile, kTile);
  const dim3 grid(unsigned((p->n + kTile - 1) / kTile), unsigned((p->m + kTile - 1) / kTile),
                  unsigned(p->l));
  example_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(*p, *o, static_cast<float*>(ws));
  // Launch errors are ours to report; faults during execution the tool finds when it syncs.
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    snprintf(msg, size, "launch failed: %s", cudaGetErrorString(e));
    return NVFP4BENCH_ERROR;
  }
  return NVFP4BENCH_OK;
}

const nvfp4bench_kernel kKernels[] = {{
    "example-cuda",
    "example plugin: CUDA, one thread per output, blocked scales, FP32 accumulation",
    NVFP4BENCH_SPACE_DEVICE,
    80, 0,  // any GPU of compute capability 8.0 or newer
    nullptr, shape_check, workspace_bytes, run,
}};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION, 1, kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
