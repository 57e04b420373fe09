// One CTA of the sm100 kernel's own device code (kernels/sm100/kernel.cuh) for the host
// execution. Compiled once per planted bug (NVFP4_SM100_PLANT=<n>, kernels/sm100/plant.hpp;
// 0: the kernel as it ships), each copy under its own name: cta_entry_<n>.
#include <cstdint>

#include "kernels/sm100/kernel.cuh"
#include "tests/sm100_host/cta_call.hpp"

#if !defined(NVFP4_SM100_HOST_MODEL)
#error "cta_entry.cpp must be built with NVFP4_SM100_HOST_MODEL"
#endif

namespace nvfp4 {
namespace sm100_host {

void NVFP4_SM100_CAT(cta_entry_, NVFP4_SM100_PLANT)(uint8_t* smem, const CtaCall& c) {
  using namespace sm100;
  const WorkPlan plan = make_plan(c.m, c.n, c.k, c.l, c.sm_count);
  const KernelArgs args = make_kernel_args(plan, c.m, c.n, c.c, c.partials, c.counters);
  gemm_cta(smem, c.map_a, c.map_b, c.map_sfa, c.map_sfb, args);
}

}  // namespace sm100_host
}  // namespace nvfp4
