// The host execution of the sm100 kernel (host_exec.hpp): the kernel's own device code
// (kernels/sm100/kernel.cuh) is built against the host models instead of inline PTX, once per
// planted bug (cta_entry.cpp); this file sets up a problem, launches the chosen copy and checks.
#include "tests/sm100_host/host_exec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "kernels/reference/cpu_exact.hpp"
#include "kernels/sm100/plant.hpp"
#include "kernels/sm100/schedule.hpp"
#include "tests/sm100_host/cta_call.hpp"
#include "src/problem/problem.hpp"

#if !defined(NVFP4_SM100_HOST_MODEL)
#error "host_exec.cpp must be built with NVFP4_SM100_HOST_MODEL"
#endif

namespace nvfp4 {
namespace sm100_host {

using namespace sm100;

#define NVFP4_DECLARE_ENTRY(n, id, name, what) void cta_entry_##n(uint8_t*, const CtaCall&);
void cta_entry_0(uint8_t*, const CtaCall&);
NVFP4_SM100_KERNEL_PLANTS(NVFP4_DECLARE_ENTRY)
#undef NVFP4_DECLARE_ENTRY

CtaEntry cta_entry(int plant) {
#define NVFP4_ENTRY(n, id, name, what) cta_entry_##n,
  static const CtaEntry entries[] = {cta_entry_0, NVFP4_SM100_KERNEL_PLANTS(NVFP4_ENTRY)};
#undef NVFP4_ENTRY
  static_assert(sizeof entries / sizeof entries[0] == kKernelPlants + 1, "a plant has no entry");
  if (plant < 0 || plant > kKernelPlants)
    throw std::invalid_argument(fmt::format("no kernel plant {}", plant));
  return entries[plant];
}

std::string Outcome::summary() const {
  return fmt::format("grid {} ({} CTAs run, {} units, split {}): model {}; verify {} checked, {} "
                     "mismatches ({} unwritten); {} stray writes; {} counters left",
                     grid, ctas, units, splits, model.summary(), verify.checked,
                     verify.mismatches, verify.unwritten, stray_writes, counters_left);
}

Outcome run(const Spec& spec) {
  const Shape& s = spec.shape;
  HostTensors t;
  if (spec.operands) {
    t = *spec.operands;
    t.c.assign(static_cast<size_t>(s.l * s.m * s.n), 0);
  } else {
    t.allocate(s);
    generate_host(Problem{s, Dist::GpuMode, spec.data_seed}, t);
  }
  poison_host(t.c.data(), static_cast<int64_t>(t.c.size()));
  const Operands ops = t.view();

  const WorkPlan plan = make_plan(s.m, s.n, s.k, s.l, spec.sm_count);
  Outcome out;
  out.splits = plan.splits;
  out.units = plan.units();
  out.grid = spec.grid > 0 ? spec.grid : launch_grid(plan, spec.sm_count);

  // The CTAs that run every split of the chosen tiles; the tiles all of whose units ran are
  // the ones checked.
  std::vector<int64_t> tiles = spec.tiles;
  if (tiles.empty())
    for (int64_t i = 0; i < plan.tiles(); ++i) tiles.push_back(i);
  std::set<int> ctas;
  for (int64_t tile : tiles)
    for (int sp = 0; sp < plan.splits; ++sp)
      ctas.insert(static_cast<int>((tile * plan.splits + sp) % out.grid));
  std::vector<char> checked(static_cast<size_t>(plan.tiles()), 0);
  for (int64_t tile = 0; tile < plan.tiles(); ++tile) {
    bool all = true;
    for (int sp = 0; sp < plan.splits; ++sp)
      all &= ctas.count(static_cast<int>((tile * plan.splits + sp) % out.grid)) > 0;
    checked[static_cast<size_t>(tile)] = all;
  }
  out.ctas = static_cast<int>(ctas.size());

  const KernelMapParams mp = make_kernel_map_params(s.m, s.n, s.k, s.l);
  const CUtensorMap map_a = host_model::encode_tensor_map(mp.a, ops.a);
  const CUtensorMap map_b = host_model::encode_tensor_map(mp.b, ops.b);
  const CUtensorMap map_sfa = host_model::encode_tensor_map(mp.sfa, ops.sfa_blocked);
  const CUtensorMap map_sfb = host_model::encode_tensor_map(mp.sfb, ops.sfb_blocked);
  std::vector<float> partials(
      plan.splits > 1 ? static_cast<size_t>(plan.units()) * kBlockM * kBlockN : 0);
  std::vector<uint32_t> counters(static_cast<size_t>(std::max(plan.tiles(), 1)), 0);
  CtaCall call;
  call.map_a = &map_a;
  call.map_b = &map_b;
  call.map_sfa = &map_sfa;
  call.map_sfb = &map_sfb;
  call.m = s.m, call.n = s.n, call.k = s.k, call.l = s.l;
  call.sm_count = spec.sm_count;
  call.c = t.c.data();
  call.partials = partials.empty() ? nullptr : partials.data();
  call.counters = counters.data();
  // The kernel's global memory: every access outside these is a finding, not a stray write.
  host_model::Config model = spec.model;
  model.globals = {{"C", t.c.data(), t.c.size() * sizeof(uint16_t)},
                   {"the split-K partials", partials.data(), partials.size() * sizeof(float)},
                   {"the split-K counters", counters.data(), counters.size() * sizeof(uint32_t)}};
  const CtaEntry entry = cta_entry(spec.kernel_plant);
  out.model = host_model::launch(model, out.grid, kThreads, kSmemBytes,
                                 std::vector<int>(ctas.begin(), ctas.end()),
                                 [&](uint8_t* smem) { entry(smem, call); });

  // Every output of a checked tile is written and not poison; a sample of them (or all) equals
  // the exact reference within the tool's tolerance; outputs of other tiles stay poisoned.
  Verifier v(Tolerance{}, "sampled");
  uint64_t pick = spec.data_seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t tile = 0; tile < plan.tiles(); ++tile) {
    const int64_t n_tile = tile % plan.n_tiles, m_tile = (tile / plan.n_tiles) % plan.m_tiles;
    const int64_t batch = tile / (int64_t{plan.n_tiles} * plan.m_tiles);
    const int64_t r0 = m_tile * kBlockM, r1 = std::min<int64_t>(s.m, r0 + kBlockM);
    const int64_t c0 = n_tile * kBlockN, c1 = std::min<int64_t>(s.n, c0 + kBlockN);
    const int64_t elements = (r1 - r0) * (c1 - c0);
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = c0; j < c1; ++j) {
        const uint16_t got = t.c[static_cast<size_t>((batch * s.m + i) * s.n + j)];
        if (!checked[static_cast<size_t>(tile)]) {
          out.stray_writes += got != kPoisonFp16;
          continue;
        }
        pick = pick * 6364136223846793005ull + 1442695040888963407ull;
        const bool exact = elements <= spec.exact_per_tile ||
                           (pick >> 33) % static_cast<uint64_t>(elements) <
                               static_cast<uint64_t>(spec.exact_per_tile);
        if (exact)
          v.check({batch, i, j}, got, exact_element_fp16(s, ops, batch, i, j));
        else if (got == kPoisonFp16)
          v.check({batch, i, j}, got, 0);  // counted as unwritten
      }
  }
  out.verify = v.result();
  for (uint32_t x : counters) out.counters_left += x != 0;
  out.c = std::move(t.c);
  return out;
}

}  // namespace sm100_host
}  // namespace nvfp4
