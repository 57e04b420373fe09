// Host kernels that end the process in known ways, built only for the tests (docs/errors.md, "A
// kernel that ends the process"): each computes nothing and exits, crashes or hangs inside run;
// NVFP4_TEST_END_AT_LOAD=exit|raw-exit|segv|abort|hang does the same while the library is being loaded
// (its constructor), before the tool has seen its table.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <unistd.h>

#include "nvfp4bench/plugin.h"

namespace {

enum class End { Exit, QuickExit, RawExit, Kill, Segv, Abort, Fpe, Hang };

volatile int* volatile g_null = nullptr;

[[noreturn]] void end(End e) {
  switch (e) {
    case End::Exit: std::exit(0);  // "success", if the tool let it through
    case End::QuickExit: std::quick_exit(0);
    case End::RawExit: ::_exit(0);  // no hook runs: only an isolated run sees it
    case End::Kill: std::raise(SIGKILL); break;
    case End::Segv: *g_null = 1; break;
    case End::Abort: std::abort();
    case End::Fpe: std::raise(SIGFPE); break;
    case End::Hang: break;
  }
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

int32_t run(void* user, const nvfp4bench_problem*, const nvfp4bench_operands*, void*, void*,
            char*, size_t) {
  end(*static_cast<const End*>(user));
}

__attribute__((constructor)) void at_load() {
  const char* e = std::getenv("NVFP4_TEST_END_AT_LOAD");
  if (!e) return;
  if (!std::strcmp(e, "exit")) end(End::Exit);
  if (!std::strcmp(e, "raw-exit")) end(End::RawExit);
  if (!std::strcmp(e, "segv")) end(End::Segv);
  if (!std::strcmp(e, "abort")) end(End::Abort);
  if (!std::strcmp(e, "hang")) end(End::Hang);
}

End kExit = End::Exit, kQuickExit = End::QuickExit, kRawExit = End::RawExit, kKill = End::Kill, kSegv = End::Segv, kAbort = End::Abort,
    kFpe = End::Fpe, kHang = End::Hang;

const nvfp4bench_kernel kKernels[] = {
    {"exit-host", "test plugin: exit(0) in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kExit, nullptr, nullptr, run},
    {"quick-exit-host", "test plugin: quick_exit(0) in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kQuickExit,
     nullptr, nullptr, run},
    {"raw-exit-host", "test plugin: _exit(0) in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kRawExit, nullptr,
     nullptr, run},
    {"kill-host", "test plugin: SIGKILL to itself in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kKill, nullptr,
     nullptr, run},
    {"segv-host", "test plugin: a null store in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kSegv, nullptr, nullptr, run},
    {"abort-host", "test plugin: abort() in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kAbort, nullptr, nullptr, run},
    {"fpe-host", "test plugin: SIGFPE in run", NVFP4BENCH_SPACE_HOST, 0, 0, &kFpe, nullptr, nullptr, run},
    {"segv-configs-host", "test plugin: a null store in its configurations' list", NVFP4BENCH_SPACE_HOST,
     0, 0, &kSegv, nullptr, nullptr, run},
    {"hang-host", "test plugin: never returns from run", NVFP4BENCH_SPACE_HOST, 0, 0, &kHang, nullptr,
     nullptr, run},
};

// segv-configs-host's configurations: listing them crashes (the configuration callbacks are
// guarded like run).
int32_t list_crashes(void* user, const nvfp4bench_problem*, uint32_t, char*, size_t) {
  end(*static_cast<const End*>(user));
}
int32_t set_any(void*, const char*, const nvfp4bench_problem*, char*, size_t) { return NVFP4BENCH_OK; }

const nvfp4bench_kernel_configs kConfigs[] = {{"segv-configs-host", list_crashes, set_any, nullptr}};
const nvfp4bench_plugin_configs kConfigTable = {1, kConfigs};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin_configs* nvfp4bench_plugin_configs_entry(void) {
  return &kConfigTable;
}

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
