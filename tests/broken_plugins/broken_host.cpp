// Deliberately broken host kernels, built only for the tests, loaded with --kernel-lib: each
// one computes C correctly (examples/plugins/example_gemm.hpp) and then breaks it in one
// known way, so the tests can assert exactly what the tool reports.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

enum class Fault { Nan, Unwritten, Hang, Status, Oob, None, NanWhenAsked, StatusLater, LongStatus, Chatty };

int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void*, void*,
            char* msg, size_t size) {
  switch (*static_cast<const Fault*>(user)) {
    case Fault::Nan:  // one quiet NaN at (l=0, i=0, j=0): one mismatch, nothing unwritten
      nvfp4_example::host_gemm(*p, *o, p->m);
      o->c[0] = 0x7E00;
      return NVFP4BENCH_OK;
    case Fault::Unwritten:  // the last row of every batch is never written: L*N elements
      nvfp4_example::host_gemm(*p, *o, p->m - 1);
      return NVFP4BENCH_OK;
    case Fault::Hang:  // never returns: only a per-case timeout (sweep --case-timeout) ends it
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    case Fault::Status:  // fails politely, with a two-line message the tool must flatten
      snprintf(msg, size, "deliberate failure for the tests\nsecond line");
      return NVFP4BENCH_ERROR;
    case Fault::LongStatus:  // fails with a message that fills the whole buffer (1 KB)
      for (size_t i = 0; i + 1 < size; ++i) msg[i] = char('a' + i % 26);
      msg[size - 1] = '\0';
      return NVFP4BENCH_ERROR;
    case Fault::Oob:  // one element past C: only AddressSanitizer sees it (the asan_* test)
      nvfp4_example::host_gemm(*p, *o, p->m);
      o->c[p->l * p->m * p->n] = 0;
      return NVFP4BENCH_OK;
    case Fault::None:
      nvfp4_example::host_gemm(*p, *o, p->m);
      return NVFP4BENCH_OK;
    case Fault::StatusLater: {  // correct on the operands of its first call, an error status on
                                // any others (the recheck's): a failure after the timing
      static uint64_t first = 0;
      static bool seen = false;
      uint64_t now = 1469598103934665603ull;  // FNV-1a of A's first 64 bytes (M*K/2 >= 64 here)
      for (int i = 0; i < 64; ++i) now = (now ^ o->a[i]) * 1099511628211ull;
      if (!seen) first = now, seen = true;
      if (now != first) {
        snprintf(msg, size, "deliberate failure on new operands");
        return NVFP4BENCH_ERROR;
      }
      nvfp4_example::host_gemm(*p, *o, p->m);
      return NVFP4BENCH_OK;
    }
    case Fault::NanWhenAsked:  // correct, or one NaN as Nan when NVFP4_TEST_BREAK is set: a
                               // kernel that regresses between two runs under one name
      nvfp4_example::host_gemm(*p, *o, p->m);
      if (std::getenv("NVFP4_TEST_BREAK")) o->c[0] = 0x7E00;
      return NVFP4BENCH_OK;
    case Fault::Chatty:  // correct, and prints to stdout on every call
      std::printf("chatter from the plugin\n");
      std::fflush(stdout);
      nvfp4_example::host_gemm(*p, *o, p->m);
      return NVFP4BENCH_OK;
  }
  return NVFP4BENCH_ERROR;
}

// Refuses K not a multiple of 64, like a kernel with a K tile would.
int32_t k64_only(void*, const nvfp4bench_problem* p, char* msg, size_t size) {
  if (p->k % 64 == 0) return NVFP4BENCH_OK;
  snprintf(msg, size, "K must be a multiple of 64");
  return NVFP4BENCH_UNSUPPORTED;
}

// Asks for more workspace than any memory holds.
size_t huge_workspace(void*, const nvfp4bench_problem*) { return SIZE_MAX; }

Fault kNan = Fault::Nan, kUnwritten = Fault::Unwritten, kHang = Fault::Hang,
      kStatus = Fault::Status, kOob = Fault::Oob, kNone = Fault::None,
      kNanWhenAsked = Fault::NanWhenAsked, kStatusLater = Fault::StatusLater,
      kLongStatus = Fault::LongStatus, kChatty = Fault::Chatty;

const nvfp4bench_kernel kKernels[] = {
    {"broken-nan-host", "test plugin: writes one NaN", NVFP4BENCH_SPACE_HOST, 0, 0, &kNan,
     nullptr, nullptr, run},
    {"broken-unwritten-host", "test plugin: leaves the last row unwritten", NVFP4BENCH_SPACE_HOST,
     0, 0, &kUnwritten, nullptr, nullptr, run},
    {"broken-hang-host", "test plugin: never returns", NVFP4BENCH_SPACE_HOST, 0, 0, &kHang,
     nullptr, nullptr, run},
    {"broken-status-host", "test plugin: returns an error status", NVFP4BENCH_SPACE_HOST, 0, 0,
     &kStatus, nullptr, nullptr, run},
    {"broken-oob-host", "test plugin: stores one element past C (AddressSanitizer finds it)",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kOob, nullptr, nullptr, run},
    {"chatty-host", "test plugin: correct, prints to stdout on every call", NVFP4BENCH_SPACE_HOST,
     0, 0, &kChatty, nullptr, nullptr, run},
    {"k64-host", "test plugin: correct, refuses K not a multiple of 64", NVFP4BENCH_SPACE_HOST,
     0, 0, &kNone, k64_only, nullptr, run},
    {"recheck-status-host", "test plugin: correct, then an error status on new operands",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kStatusLater, nullptr, nullptr, run},
    {"flaky-host", "test plugin: correct, or one NaN when NVFP4_TEST_BREAK is set",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kNanWhenAsked, nullptr, nullptr, run},
    {"long-status-host", "test plugin: fails with a 1 KB message", NVFP4BENCH_SPACE_HOST, 0, 0,
     &kLongStatus, nullptr, nullptr, run},
    {"huge-workspace-host", "test plugin: asks for SIZE_MAX workspace bytes", NVFP4BENCH_SPACE_HOST,
     0, 0, &kNone, nullptr, huge_workspace, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
