// An example plugin with one host kernel, `example-host`: the template for a kernel of your own,
// and what CI runs through --kernel-lib on machines without a GPU. It uses the tool's
// header-only format library (src/format/nvfp4.hpp); a plugin may equally bring its own.
#include "example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

int32_t run_host(void*, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void*, void*,
                 char*, size_t) {
  nvfp4_example::host_gemm(*p, *o, p->m);
  return NVFP4BENCH_OK;
}

const nvfp4bench_kernel kKernels[] = {{
    "example-host",
    "example plugin: CPU, integer block sums, FP32 accumulation",
    NVFP4BENCH_SPACE_HOST,
    0, 0,     // compute capability: not used by host kernels
    nullptr,  // user_data
    nullptr,  // shape_check: every shape the tool accepts
    nullptr,  // workspace_bytes: none
    run_host,
}};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION, 1, kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
