// Host kernels that cheat the verdict, built only for the tests (docs/cli.md, "The verdict"):
// each one's first call is right, so only the verdict (the timed outputs at secret coordinates
// of secret samples, the recheck on fresh operands, --check-every-call) can tell. Loaded with
// --kernel-lib; tests/cli/verdict_test.py says which check must catch each.
//   lazy-host          computes on its first call only, then returns leaving C as it is
//   memo-host          caches its output by input address and shape, replays it on a hit
//   memo-shape-host    caches its output by shape alone
//   fast-host          poison-aware: computes only when C holds the first call's poison 0x7F7F
//                      (today's checked calls), else returns at once
//   content-memo-host  caches its output by operand addresses, shape and a fingerprint of 64
//                      sampled bytes of each of A, B, SFA, SFB; replays on a hit. With fresh
//                      operands before every sample it never hits, so it computes every call
//                      and passes: with $NVFP4_CHEAT_LOG set it writes "calls N hits H" there
//                      after every call, so a test can tell that it never replayed
//   count-host         counts its calls and computes only on calls 0, 1, 3, 7, 15, ... (the old
//                      public checked schedule), else returns leaving C
//   random-host        computes with probability 1 - p per call (p = $NVFP4_CHEAT_P, default
//                      0.5) from a fixed-seed PRNG; call 0 always computes
//   deferred-host      after its first call, run() hands the GEMM to a thread of its own and
//                      returns at once: C is written after the call (work outside the window).
//                      One such thread at a time (a call that finds it still busy starts none),
//                      never waited for by a call; joined when the library unloads rather than
//                      detached, so that no thread of this library outlives it. (A thread joined
//                      at the next call would compute that call's operands between the samples,
//                      as they are refreshed before it reads them: right outputs, partly
//                      untimed work: the report of this plugin's commit says more.)
//                      With $NVFP4_CHEAT_DELAY_MS set, the thread sleeps that long first: its
//                      reads and writes then land after the case has ended (a test of how long
//                      the tool keeps a run's buffers). With $NVFP4_CHEAT_DEFER_FROM = N, calls
//                      before N compute in the call and only later ones are deferred (N = the
//                      recheck's call: only the recheck's operands are read late).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"

namespace {

enum class Cheat { Lazy, Memo, MemoShape, Fast, ContentMemo, Count, Random, Deferred };

struct State {
  explicit State(Cheat c) : cheat(c) {}
  ~State() {
    if (worker.joinable()) worker.join();
  }
  Cheat cheat;
  uint64_t calls = 0;
  uint64_t hits = 0;
  uint64_t rng = 0x5EEDC0DE12345678ull;  // random-host's fixed seed
  std::map<std::tuple<const void*, int64_t, int64_t, int64_t, int64_t>, std::vector<uint16_t>> memo;
  std::map<std::string, std::vector<uint16_t>> content;
  std::thread worker;
  std::atomic<bool> busy{false};
};

// splitmix64: the same sequence on every run.
uint64_t next_random(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t cheat_defer_from() {
  const char* v = std::getenv("NVFP4_CHEAT_DEFER_FROM");
  return v && *v ? std::strtoull(v, nullptr, 10) : 1;
}

int cheat_delay_ms() {
  const char* v = std::getenv("NVFP4_CHEAT_DELAY_MS");
  return v && *v ? std::atoi(v) : 0;
}

double cheat_p() {
  const char* v = std::getenv("NVFP4_CHEAT_P");
  return v && *v ? std::atof(v) : 0.5;
}

template <class T>
void append(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// 64 bytes of `x` (`bytes` long) at evenly spaced positions.
void fingerprint(std::string& key, const uint8_t* x, size_t bytes) {
  for (size_t i = 0; i < 64; ++i) key.push_back(char(x[(i * bytes / 64) % bytes]));
}

std::string content_key(const nvfp4bench_problem& p, const nvfp4bench_operands& o) {
  std::string key;
  for (const void* at : {static_cast<const void*>(o.a), static_cast<const void*>(o.b),
                         static_cast<const void*>(o.sfa), static_cast<const void*>(o.sfb)})
    append(key, at);
  for (const int64_t v : {p.m, p.n, p.k, p.l}) append(key, v);
  const size_t a = size_t(p.l * p.m * p.k / 2), b = size_t(p.l * p.n * p.k / 2);
  fingerprint(key, o.a, a);
  fingerprint(key, o.b, b);
  fingerprint(key, o.sfa, a / 8);
  fingerprint(key, o.sfb, b / 8);
  return key;
}

void log_hits(const State& st) {
  const char* path = std::getenv("NVFP4_CHEAT_LOG");
  if (!path || !*path) return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "calls %llu hits %llu\n", static_cast<unsigned long long>(st.calls),
                 static_cast<unsigned long long>(st.hits));
    std::fclose(f);
  }
}

int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o, void*, void*,
            char*, size_t) {
  State& st = *static_cast<State*>(user);
  const size_t elems = size_t(p->l * p->m * p->n);
  const uint64_t call = st.calls++;
  switch (st.cheat) {
    case Cheat::Lazy:
      if (call == 0) nvfp4_example::host_gemm(*p, *o, p->m);
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
    case Cheat::ContentMemo: {
      const std::string key = content_key(*p, *o);
      auto hit = st.content.find(key);
      if (hit != st.content.end()) {
        std::memcpy(o->c, hit->second.data(), elems * 2);
        ++st.hits;
      } else {
        nvfp4_example::host_gemm(*p, *o, p->m);
        if (st.content.size() >= 16) st.content.clear();  // fresh operands: bound the cache
        st.content[key].assign(o->c, o->c + elems);
      }
      log_hits(st);
      return NVFP4BENCH_OK;
    }
    case Cheat::Count:
      if (((call + 1) & call) == 0) nvfp4_example::host_gemm(*p, *o, p->m);  // 0, 1, 3, 7, ...
      return NVFP4BENCH_OK;
    case Cheat::Random: {
      const double u = double(next_random(st.rng) >> 11) * 0x1.0p-53;
      if (call == 0 || u >= cheat_p()) nvfp4_example::host_gemm(*p, *o, p->m);
      return NVFP4BENCH_OK;
    }
    case Cheat::Deferred:
      if (call < cheat_defer_from()) {
        nvfp4_example::host_gemm(*p, *o, p->m);
      } else if (!st.busy.load()) {
        if (st.worker.joinable()) st.worker.join();  // done: returns at once
        st.busy = true;
        st.worker = std::thread([&st, p = *p, o = *o, delay = cheat_delay_ms()] {
          if (delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
          nvfp4_example::host_gemm(p, o, p.m);
          st.busy = false;
        });
      }
      return NVFP4BENCH_OK;
  }
  return NVFP4BENCH_ERROR;
}

State kLazy{Cheat::Lazy}, kMemo{Cheat::Memo}, kMemoShape{Cheat::MemoShape}, kFast{Cheat::Fast},
    kContentMemo{Cheat::ContentMemo}, kCount{Cheat::Count}, kRandom{Cheat::Random},
    kDeferred{Cheat::Deferred};

const nvfp4bench_kernel kKernels[] = {
    {"lazy-host", "test plugin: right on its first call only", NVFP4BENCH_SPACE_HOST, 0, 0,
     &kLazy, nullptr, nullptr, run},
    {"memo-host", "test plugin: replays its output cached by input address", NVFP4BENCH_SPACE_HOST,
     0, 0, &kMemo, nullptr, nullptr, run},
    {"memo-shape-host", "test plugin: replays its output cached by shape", NVFP4BENCH_SPACE_HOST,
     0, 0, &kMemoShape, nullptr, nullptr, run},
    {"fast-host", "test plugin: computes only when C holds the poison", NVFP4BENCH_SPACE_HOST, 0,
     0, &kFast, nullptr, nullptr, run},
    {"content-memo-host", "test plugin: replays its output cached by a fingerprint of its inputs",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kContentMemo, nullptr, nullptr, run},
    {"count-host", "test plugin: computes on calls 0, 1, 3, 7, 15, ... only",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kCount, nullptr, nullptr, run},
    {"random-host", "test plugin: skips a call with probability $NVFP4_CHEAT_P (0.5)",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kRandom, nullptr, nullptr, run},
    {"deferred-host", "test plugin: computes on a thread of its own after the call returns",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kDeferred, nullptr, nullptr, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
