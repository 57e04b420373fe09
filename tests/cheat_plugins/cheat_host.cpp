// Host kernels that cheat the verdict, built only for the tests (docs/cli.md, "The verdict"):
// each one's first call is right, so only the checks of the timed calls, the recheck on fresh
// operands and the physical floor can tell. Loaded with --kernel-lib.
//   lazy-host        computes on its first call only, then returns leaving C as it is
//   memo-host        caches its output by input address and shape, replays it on a hit
//   memo-shape-host  caches its output by shape alone
//   fast-host        computes only when C holds the tool's poison (a checked call), else
//                    returns at once: right wherever it is looked at, timed below the floor
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

enum class Cheat { Lazy, Memo, MemoShape, Fast };

struct State {
  explicit State(Cheat c) : cheat(c) {}
  Cheat cheat;
  bool called = false;
  std::map<std::tuple<const void*, int64_t, int64_t, int64_t, int64_t>, std::vector<uint16_t>> memo;
};

int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void*, void*,
            char*, size_t) {
  State& st = *static_cast<State*>(user);
  const size_t elems = size_t(p->l * p->m * p->n);
  switch (st.cheat) {
    case Cheat::Lazy:
      if (!st.called) nvfp4_example::host_gemm(*p, *o, p->m);
      st.called = true;
      return NVFP4BENCH_OK;
    case Cheat::Memo:
    case Cheat::MemoShape: {
      const void* at = st.cheat == Cheat::Memo ? static_cast<const void*>(o->a) : nullptr;
      auto& out = st.memo[{at, p->m, p->n, p->k, p->l}];
      if (out.empty()) {
        nvfp4_example::host_gemm(*p, *o, p->m);
        out.assign(o->c, o->c + elems);
      } else {
        std::memcpy(o->c, out.data(), elems * 2);
      }
      return NVFP4BENCH_OK;
    }
    case Cheat::Fast:
      if (o->c[0] == 0x7F7F) nvfp4_example::host_gemm(*p, *o, p->m);  // the poison: checked
      return NVFP4BENCH_OK;
  }
  return NVFP4BENCH_ERROR;
}

State kLazy{Cheat::Lazy}, kMemo{Cheat::Memo}, kMemoShape{Cheat::MemoShape}, kFast{Cheat::Fast};

const nvfp4bench_kernel kKernels[] = {
    {"lazy-host", "test plugin: right on its first call only", NVFP4BENCH_SPACE_HOST, 0, 0,
     &kLazy, nullptr, nullptr, run},
    {"memo-host", "test plugin: replays its output cached by input address", NVFP4BENCH_SPACE_HOST,
     0, 0, &kMemo, nullptr, nullptr, run},
    {"memo-shape-host", "test plugin: replays its output cached by shape", NVFP4BENCH_SPACE_HOST,
     0, 0, &kMemoShape, nullptr, nullptr, run},
    {"fast-host", "test plugin: computes only when C holds the poison", NVFP4BENCH_SPACE_HOST, 0,
     0, &kFast, nullptr, nullptr, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
