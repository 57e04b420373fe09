// An example plugin with one host kernel, `example-host`: the template for a kernel of your own,
// and what CI runs through --kernel-lib on machines without a GPU. It uses the tool's
// header-only format library (src/format/nvfp4.hpp); a plugin may equally bring its own.
//
// It also shows the optional configurations entry (docs/plugins.md): the kernel reads the scales
// from either layout and walks C in column tiles of 16 or 64 (a tile wider than N is not offered
// for that shape), so `--list-configs` lists up to four ways, `--kernel-config "blocked tile 64"`
// pins one and a sweep with "kernel_config": "all" runs each.
#include <cstdio>
#include <cstring>
#include <string>

#include "example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

struct Config {
  bool blocked = false;  // scales from the blocked layout instead of the linear one
  int64_t tile = 16;     // columns of C per tile
};

// What the tool pinned; "" gives back the kernel's own choice, Config{}.
struct State {
  Config config;
};
State g_state;

std::string spell(const Config& c) {
  return std::string(c.blocked ? "blocked" : "linear") + " tile " + std::to_string(c.tile);
}

// The configurations for a problem, in the order --list-configs shows them.
int count_for(const nvfp4bench_problem* p, Config out[4]) {
  int n = 0;
  for (bool blocked : {false, true})
    for (int64_t tile : {16, 64})
      if (tile == 16 || tile <= p->n) out[n++] = {blocked, tile};
  return n;
}

int32_t list_configs(void*, const nvfp4bench_problem* p, uint32_t index, char* buf, size_t size) {
  Config all[4];
  if (index >= uint32_t(count_for(p, all))) return NVFP4BENCH_UNSUPPORTED;
  std::snprintf(buf, size, "%s", spell(all[index]).c_str());
  return NVFP4BENCH_OK;
}

int32_t set_config(void* ud, const char* config, const nvfp4bench_problem* p, char* msg, size_t size) {
  State& st = *static_cast<State*>(ud);
  if (!*config) {
    st = State{};
    return NVFP4BENCH_OK;
  }
  Config all[4];
  const int n = count_for(p, all);
  for (int i = 0; i < n; ++i)
    if (spell(all[i]) == config) {
      st.config = all[i];
      return NVFP4BENCH_OK;
    }
  if (std::strstr(config, "tile 64"))
    std::snprintf(msg, size, "tile 64 needs N >= 64 (N is %lld)", (long long)p->n);
  else
    std::snprintf(msg, size, "no such configuration (expected linear or blocked, then tile 16 or tile 64)");
  return NVFP4BENCH_UNSUPPORTED;
}

int32_t current_config(void* ud, const nvfp4bench_problem*, char* buf, size_t size) {
  std::snprintf(buf, size, "%s", spell(static_cast<State*>(ud)->config).c_str());
  return NVFP4BENCH_OK;
}

int32_t run_host(void* ud, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void*, void*,
                 char*, size_t) {
  const Config c = static_cast<State*>(ud)->config;
  for (int64_t l = 0; l < p->l; ++l)
    for (int64_t j0 = 0; j0 < p->n; j0 += c.tile)
      for (int64_t i = 0; i < p->m; ++i)
        for (int64_t j = j0; j < p->n && j < j0 + c.tile; ++j)
          o->c[(l * p->m + i) * p->n + j] = nvfp4::fp16_bits_from_double(
              nvfp4_example::output_element(*p, *o, l, i, j, c.blocked));
  return NVFP4BENCH_OK;
}

const nvfp4bench_kernel kKernels[] = {{
    "example-host",
    "example plugin: CPU, integer block sums, FP32 accumulation",
    NVFP4BENCH_SPACE_HOST,
    0, 0,      // compute capability: not used by host kernels
    &g_state,  // user_data: what the configuration callbacks pinned
    nullptr,   // shape_check: every shape the tool accepts
    nullptr,   // workspace_bytes: none
    run_host,
}};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION, 1, kKernels};

const nvfp4bench_kernel_configs kConfigs[] = {{"example-host", list_configs, set_config, current_config}};
const nvfp4bench_plugin_configs kPluginConfigs = {1, kConfigs};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}

// Optional: without it the kernel simply has no configurations.
extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin_configs* nvfp4bench_plugin_configs_entry(void) {
  return &kPluginConfigs;
}
