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
//   predict-host       works the verdict's secret out of its operands and computes only the
//                      elements it predicts the tool will gather: the operand generator's mixer
//                      can be undone step by step, so A's first 8 bytes (--dist gpumode) give the
//                      call's operand seed, and until the verdict drew its seeds through a keyed
//                      PRF (src/core/siphash.hpp) that seed gave the secret, and with it the
//                      gathered elements (found by a red-team review: it passed in every mode).
//                      It tries the derivation of those days, confirms it on C's random fill and,
//                      when that fails, leaves C as it is. With $NVFP4_CHEAT_LOG set it writes
//                      "calls N found F" there after every call
//   fault-host         computes nothing in the call: it protects C's pages and installs its own
//                      SIGSEGV handler, which computes a page when the tool first reads it (the
//                      gather after the window); a write (the next fill) drops the work. Also
//                      found by the red-team review
//   stdclock-host      the same with libstdc++'s GOT slot of clock_gettime, which its partial RELRO
//                      leaves writable (std::chrono::steady_clock::now calls through it): the tool
//                      once timed host calls with steady_clock (the second red-team review). Only
//                      where that slot's page is writable; with $NVFP4_CHEAT_LOG set it writes
//                      "patched P real_us R" there (R: its calls' shortest real time)
//   pipe-host          finds a pipe of the tool's (both ends, 1 MiB, empty: the verdict once read C
//                      through one such pipe, kept for the process), fills it inside the call
//                      and returns without computing; a thread of its own then computes C and
//                      drains the pipe, and the tool's write of C, blocked meanwhile, copies the
//                      finished C (found by the second red-team review: it passed in every
//                      mode). Where it finds no such pipe it returns without computing: the
//                      verdict now reads C with process_vm_readv, or a pipe made for the one read
//   notif-host         returns without computing and holds the tool's read of C (process_vm_readv)
//                      with a seccomp filter of its own on the tool's thread (a user notification)
//                      until its thread has computed C (the third red-team review: it passed
//                      where a call takes under 1 ms). The tool's own filter now refuses
//                      seccomp(): it then returns without computing. With $NVFP4_CHEAT_LOG set
//                      it writes "installed I" there
//   verdict-file-host  an isolated run's child writes its exit code into a file its parent
//                      reads: this one finds the file's name in /proc/self/environ, writes 0 there
//                      and ends the process, computing nothing (the third review: exit 0, no
//                      report). The name is scrubbed and the parent wants a token beside the code
//   exit-forge-host    computes nothing; an atexit handler it registers rewrites the --json report
//                      named in /proc/self/cmdline ("incorrect" -> "passed") and ends the process
//                      with exit 0 (the fourth red-team review: it passed as exit 0 with a passed
//                      report). The tool now ends a run with foreign code as soon as the verdict
//                      and reports are out, before any atexit handler
//   clock-host         computes honestly, but on its first call points the tool's GOT entries of
//                      clock_gettime and std::chrono::steady_clock::now (the host backend's clock,
//                      now and before) at clocks of its own that leave out the time spent in its
//                      calls. With the GOT
//                      read-only after load (full RELRO, CMakeLists.txt) the write crashes the
//                      call; before, it passed at any speed it chose (the red-team review)
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <ctime>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <dirent.h>
#include <elf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "examples/plugins/example_gemm.hpp"
#include "nvfp4bench/plugin.h"
#include "src/problem/generate.hpp"

namespace {

enum class Cheat { Lazy, Memo, MemoShape, Fast, ContentMemo, Count, Random, Deferred, Predict, Fault, Clock, Pipe, StdClock, Notif, VerdictFile, ExitForge };

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
  int64_t run = -1;  // predict-host: the run it last placed
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

// C's elements [e0, e1), as host_gemm computes them.
void compute_elements(const nvfp4bench_problem& p, const nvfp4bench_operands& o, int64_t e0, int64_t e1) {
  for (int64_t e = e0; e < e1; ++e)
    o.c[e] = nvfp4::fp16_bits_from_double(
        nvfp4_example::output_element(p, o, e / (p.m * p.n), e / p.n % p.m, e % p.n, false));
}

// predict-host: the inverse of the generator's mixer (nvfp4::mix64), step by step.
uint64_t unxorshift(uint64_t z, int s) {  // z ^= z >> s undone
  uint64_t r = z;
  for (int i = 0; i < 64 / s + 1; ++i) r = z ^ (r >> s);
  return r;
}
uint64_t inverse_mod64(uint64_t a) {  // of an odd a, by Newton's iteration
  uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
uint64_t unmix64(uint64_t z) {
  z = unxorshift(z, 31);
  z *= inverse_mod64(0x94D049BB133111EBull);
  z = unxorshift(z, 27);
  z *= inverse_mod64(0xBF58476D1CE4E5B9ull);
  z = unxorshift(z, 30);
  return z - 0x9E3779B97F4A7C15ull;
}
// The verdict's derivations before the PRF, each step invertible.
uint64_t old_call_seed_inverse(uint64_t call_seed, int64_t run) {  // the secret
  return unmix64(unmix64(call_seed) ^ nvfp4::mix64(uint64_t(run) * 4096u)) ^ 0xC0FFEE5EEDull;
}
uint64_t old_fill_seed(uint64_t secret, int64_t run) {
  return nvfp4::mix64(nvfp4::mix64(secret ^ 0xF111ull) ^ uint64_t(run));
}
uint64_t old_gather_seed(uint64_t secret, int64_t run) {
  return nvfp4::mix64(nvfp4::mix64(secret ^ 0x6A7Eull) ^ uint64_t(run));
}

// The operand seed of A generated under --dist gpumode, from its first block's 8 bytes.
uint64_t operand_seed(const uint8_t* a) {
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r |= uint64_t(a[i]) << (8 * i);
  const uint64_t key = unmix64(unmix64(r) - 0xE7037ED1A0B428DBull) ^ nvfp4::mix64(0);
  return unmix64(key) ^ 0xA0761D6478BD642Full;  // random_key(seed, A) undone
}

// Computes the elements of C the tool would gather if the secret followed from the operands;
// false (C untouched) when no run's derived fill matches C's.
bool predict(State& st, const nvfp4bench_problem& p, const nvfp4bench_operands& o) {
  const int64_t elems = p.l * p.m * p.n;
  const uint64_t seed = operand_seed(o.a);
  for (int64_t run = st.run + 1; run < st.run + 1 + 4096; ++run) {
    const uint64_t secret = old_call_seed_inverse(seed, run);
    bool match = true;
    for (int64_t e = 0; e < 8 && e < elems && match; ++e)
      match = o.c[e] == nvfp4::random_finite_fp16(old_fill_seed(secret, run), uint64_t(e));
    if (!match) continue;
    st.run = run;
    const int64_t per = std::min<int64_t>(elems, 4096);  // the gathered elements of a one-call run
    for (int64_t t = 0; t < per; ++t) {
      const int64_t e = nvfp4::gathered_index(old_gather_seed(secret, run), 0, t, elems, per);
      compute_elements(p, o, e, e + 1);
    }
    return true;
  }
  return false;
}

// fault-host: the pages of C it left protected, and the call they are to be computed for.
struct Faulted {
  volatile sig_atomic_t armed = 0;
  nvfp4bench_problem p{};
  nvfp4bench_operands o{};
  uintptr_t lo = 0, hi = 0;
} g_fault;
struct sigaction g_fault_old;
bool g_fault_installed = false;

void on_fault(int sig, siginfo_t* info, void* ucv) {
  const uintptr_t at = uintptr_t(info->si_addr);
  const long page = sysconf(_SC_PAGESIZE);
  if (g_fault.armed && at >= g_fault.lo && at < g_fault.hi) {
    const bool write = static_cast<ucontext_t*>(ucv)->uc_mcontext.gregs[REG_ERR] & 2;
    if (write) {  // the tool refills C: the work nobody read is dropped
      mprotect(reinterpret_cast<void*>(g_fault.lo), g_fault.hi - g_fault.lo, PROT_READ | PROT_WRITE);
      g_fault.armed = 0;
      return;
    }
    const uintptr_t from = at & ~uintptr_t(page - 1);
    mprotect(reinterpret_cast<void*>(from), size_t(page), PROT_READ | PROT_WRITE);
    const uintptr_t c0 = uintptr_t(g_fault.o.c);
    const int64_t elems = g_fault.p.l * g_fault.p.m * g_fault.p.n;
    compute_elements(g_fault.p, g_fault.o, from > c0 ? int64_t((from - c0) / 2) : 0,
                     std::min<int64_t>(elems, int64_t((from + uintptr_t(page) - c0) / 2)));
    return;
  }
  if ((g_fault_old.sa_flags & SA_SIGINFO) && g_fault_old.sa_sigaction) return g_fault_old.sa_sigaction(sig, info, ucv);
  signal(sig, SIG_DFL);
  raise(sig);
}

// pipe-host: the tool's pipe (read and write ends) and the call its thread is to compute.
struct PipeCheat {
  int rfd = -1, wfd = -1, size = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool pending = false;
  nvfp4bench_problem p{};
  nvfp4bench_operands o{};
  std::vector<char> junk;
};
PipeCheat& pipe_cheat() {
  static PipeCheat* c = new PipeCheat;  // never destroyed: its thread may still wait on it at exit
  return *c;
}

// A pipe with both ends open here, 1 MiB or more, empty: the one the verdict once kept.
bool find_tool_pipe(PipeCheat& pc) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return false;
  std::vector<std::pair<int, std::string>> pipes;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[128];
    const std::string path = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (std::strncmp(target, "pipe:[", 6) == 0) pipes.emplace_back(std::atoi(e->d_name), target);
  }
  closedir(d);
  for (const auto& [r, ri] : pipes)
    for (const auto& [w, wi] : pipes) {
      if (ri != wi || (fcntl(r, F_GETFL) & O_ACCMODE) != O_RDONLY || (fcntl(w, F_GETFL) & O_ACCMODE) != O_WRONLY)
        continue;
      int queued = -1;
      const int size = fcntl(w, F_GETPIPE_SZ);
      if (size >= (1 << 20) && ioctl(r, FIONREAD, &queued) == 0 && queued == 0) {
        pc.rfd = r;
        pc.wfd = w;
        pc.size = size;
        return true;
      }
    }
  return false;
}

// pipe-host's thread: computes the call handed to it, then drains the junk so that the tool's
// blocked write of C goes through with C finished.
void pipe_worker() {
  PipeCheat& pc = pipe_cheat();
  std::vector<char> sink(size_t(pc.size));
  for (;;) {
    std::unique_lock<std::mutex> lock(pc.mu);
    pc.cv.wait(lock, [&] { return pc.pending; });
    const nvfp4bench_problem p = pc.p;
    const nvfp4bench_operands o = pc.o;
    lock.unlock();
    nvfp4_example::host_gemm(p, o, p.m);
    for (int got = 0; got < pc.size;) {
      const ssize_t r = read(pc.rfd, sink.data(), size_t(pc.size - got));
      if (r > 0) got += int(r);
    }
    lock.lock();
    pc.pending = false;
    pc.cv.notify_all();
  }
}

// notif-host: its thread's work and the filter's listener.
struct NotifCheat {
  std::mutex mu;
  std::condition_variable cv;
  bool have = false;
  nvfp4bench_problem p{};
  nvfp4bench_operands o{};
  std::atomic<int> pending{0}, listener{-1};
  int installed = -1;  // -1: not tried
};
NotifCheat& notif_cheat() {
  static NotifCheat* c = new NotifCheat;  // never destroyed: its threads outlive every call
  return *c;
}

void notif_worker() {
  NotifCheat& nc = notif_cheat();
  for (;;) {
    std::unique_lock<std::mutex> lock(nc.mu);
    nc.cv.wait(lock, [&] { return nc.have; });
    nc.have = false;
    const nvfp4bench_problem p = nc.p;
    const nvfp4bench_operands o = nc.o;
    lock.unlock();
    nvfp4_example::host_gemm(p, o, p.m);
    nc.pending.store(0);
  }
}

// Answers each held process_vm_readv once C is computed: it then goes through.
void notif_listener() {
  NotifCheat& nc = notif_cheat();
  while (nc.listener.load() < 0) usleep(100);
  for (;;) {
    seccomp_notif req;
    std::memset(&req, 0, sizeof req);
    if (ioctl(nc.listener.load(), SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue;
    while (nc.pending.load()) {
    }
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(nc.listener.load(), SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
}

// A filter on this (the tool's) thread that hands every process_vm_readv to the listener.
bool hold_the_tools_reads(NotifCheat& nc) {
  sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog prog{static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (fd < 0) return false;
  nc.listener.store(int(fd));
  return true;
}

// verdict-file-host: the isolated child's verdict file named in /proc/self/environ, or "".
std::string verdict_file_from_environ() {
  std::string env;
  if (FILE* f = std::fopen("/proc/self/environ", "rb")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) env.append(buf, n);
    std::fclose(f);
  }
  const std::string key = "NVFP4BENCH_VERDICT_FILE=";
  for (size_t at = 0; at < env.size();) {
    const size_t end = std::min(env.find('\0', at), env.size());
    if (env.compare(at, key.size(), key) == 0) return env.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return "";
}

// exit-forge-host: the report named after --json in /proc/self/cmdline, passed, and exit 0.
void forge_at_exit() {
  std::string cmd;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) cmd.append(buf, n);
    std::fclose(f);
  }
  std::vector<std::string> args;
  for (size_t at = 0; at < cmd.size();) {
    const size_t end = std::min(cmd.find('\0', at), cmd.size());
    args.push_back(cmd.substr(at, end - at));
    at = end + 1;
  }
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != "--json") continue;
    std::string text;
    if (FILE* f = std::fopen(args[i + 1].c_str(), "rb")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      std::fclose(f);
    }
    for (size_t at; (at = text.find("\"incorrect\"")) != std::string::npos;) text.replace(at, 11, "\"passed\"");
    if (FILE* f = std::fopen(args[i + 1].c_str(), "wb")) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  }
  _exit(0);
}

// clock-host: the nanoseconds its calls spent, left out of its clock.
std::atomic<int64_t> g_hidden_ns{0};
int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
std::chrono::steady_clock::time_point hiding_now() noexcept {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(monotonic_ns() - g_hidden_ns.load()));
}
// stdclock-host's clock_gettime: CLOCK_MONOTONIC less the hidden time.
int hiding_clock_gettime(clockid_t id, timespec* ts) {
  const int r = static_cast<int>(syscall(SYS_clock_gettime, id, ts));
  if (r == 0 && id == CLOCK_MONOTONIC) {
    const int64_t ns = int64_t(ts->tv_sec) * 1000000000 + ts->tv_nsec - g_hidden_ns.load();
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
  }
  return r;
}

// Whether `at` lies in a writable mapping (/proc/self/maps): the slot is written only then.
bool writable(uintptr_t at) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[512];
  bool w = false;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && at >= lo && at < hi) w = perms[1] == 'w';
  }
  std::fclose(f);
  return w;
}

int g_stdclock_patched = 0;

// The GOT slots (PLT relocations) of symbol `name` in a loaded object.
std::vector<uintptr_t> got_slots(const dl_phdr_info* info, const char* name) {
  std::vector<uintptr_t> slots;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return slots;
  const ElfW(Rela)* rel = nullptr;
  size_t relsz = 0;
  const ElfW(Sym)* sym = nullptr;
  const char* str = nullptr;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_JMPREL) rel = reinterpret_cast<const ElfW(Rela)*>(d->d_un.d_ptr);
    if (d->d_tag == DT_PLTRELSZ) relsz = d->d_un.d_val;
    if (d->d_tag == DT_SYMTAB) sym = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) str = reinterpret_cast<const char*>(d->d_un.d_ptr);
  }
  for (size_t k = 0; rel && sym && str && k < relsz / sizeof(ElfW(Rela)); ++k)
    if (std::strcmp(str + sym[ELF64_R_SYM(rel[k].r_info)].st_name, name) == 0)
      slots.push_back(info->dlpi_addr + rel[k].r_offset);
  return slots;
}

// Points libstdc++'s GOT slot of clock_gettime at hiding_clock_gettime, where writable.
int patch_stdclock(dl_phdr_info* info, size_t, void*) {
  if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libstdc++")) return 0;
  for (const uintptr_t slot : got_slots(info, "clock_gettime"))
    if (writable(slot)) {
      *reinterpret_cast<void**>(slot) = reinterpret_cast<void*>(&hiding_clock_gettime);
      ++g_stdclock_patched;
    }
  return 1;
}

// Points the main program's GOT slots of its clocks, clock_gettime (the timer's) and
// steady_clock::now (the timer's until 66881bc), at hiding ones (plain stores).
int patch_clock(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_name && info->dlpi_name[0]) return 0;  // the main program only
  for (const uintptr_t slot : got_slots(info, "clock_gettime"))
    *reinterpret_cast<void**>(slot) = reinterpret_cast<void*>(&hiding_clock_gettime);
  for (const uintptr_t slot : got_slots(info, "_ZNSt6chrono3_V212steady_clock3nowEv"))
    *reinterpret_cast<void**>(slot) = reinterpret_cast<void*>(&hiding_now);
  return 1;
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
    case Cheat::Predict: {
      if (o->c[0] == nvfp4::kPoisonFp16) {  // the first call and the recheck
        nvfp4_example::host_gemm(*p, *o, p->m);
      } else if (predict(st, *p, *o)) {
        ++st.hits;
      }
      if (const char* path = std::getenv("NVFP4_CHEAT_LOG"); path && *path)
        if (FILE* f = std::fopen(path, "w")) {
          std::fprintf(f, "calls %llu found %llu\n", static_cast<unsigned long long>(st.calls),
                       static_cast<unsigned long long>(st.hits));
          std::fclose(f);
        }
      return NVFP4BENCH_OK;
    }
    case Cheat::StdClock: {
      static int64_t shortest_ns = INT64_MAX;
      if (call == 0) dl_iterate_phdr(patch_stdclock, nullptr);
      const int64_t t0 = monotonic_ns();
      nvfp4_example::host_gemm(*p, *o, p->m);
      const int64_t spent = monotonic_ns() - t0;
      shortest_ns = std::min(shortest_ns, spent);
      g_hidden_ns += std::max<int64_t>(0, spent - 1000);
      if (const char* path = std::getenv("NVFP4_CHEAT_LOG"); path && *path)
        if (FILE* f = std::fopen(path, "w")) {
          std::fprintf(f, "patched %d real_us %.1f\n", g_stdclock_patched, double(shortest_ns) * 1e-3);
          std::fclose(f);
        }
      return NVFP4BENCH_OK;
    }
    case Cheat::Notif: {
      NotifCheat& nc = notif_cheat();
      while (nc.pending.load()) {  // the last call's work is done by now
      }
      if (o->c[0] == nvfp4::kPoisonFp16) {  // the first call and the recheck
        nvfp4_example::host_gemm(*p, *o, p->m);
        return NVFP4BENCH_OK;
      }
      if (nc.installed < 0) {  // threads first (without the filter), then the filter on this one
        std::thread(notif_worker).detach();
        std::thread(notif_listener).detach();
        nc.installed = hold_the_tools_reads(nc) ? 1 : 0;
        if (const char* path = std::getenv("NVFP4_CHEAT_LOG"); path && *path)
          if (FILE* f = std::fopen(path, "w")) {
            std::fprintf(f, "installed %d\n", nc.installed);
            std::fclose(f);
          }
      }
      if (nc.installed == 0) return NVFP4BENCH_OK;  // nothing to hold the read with
      nc.pending.store(1);
      {
        std::lock_guard<std::mutex> lock(nc.mu);
        nc.p = *p;
        nc.o = *o;
        nc.have = true;
      }
      nc.cv.notify_one();
      return NVFP4BENCH_OK;
    }
    case Cheat::ExitForge: {
      if (call == 0) std::atexit(forge_at_exit);
      return NVFP4BENCH_OK;
    }
    case Cheat::VerdictFile: {
      const std::string path = verdict_file_from_environ();
      if (!path.empty() && path[0] == '/')  // what is left of a scrubbed name is no file of the tool's
        if (FILE* f = std::fopen(path.c_str(), "w")) {
          std::fputs("0\n", f);
          std::fclose(f);
        }
      _exit(0);
    }
    case Cheat::Pipe: {
      PipeCheat& pc = pipe_cheat();
      {
        std::unique_lock<std::mutex> lock(pc.mu);  // the last call's work is done by now
        pc.cv.wait(lock, [&] { return !pc.pending; });
      }
      if (o->c[0] == nvfp4::kPoisonFp16) {  // the first call and the recheck
        nvfp4_example::host_gemm(*p, *o, p->m);
        return NVFP4BENCH_OK;
      }
      if (pc.wfd < 0) {
        if (!find_tool_pipe(pc)) return NVFP4BENCH_OK;  // nothing to hide the work behind
        pc.junk.assign(size_t(pc.size), 0);
        std::thread(pipe_worker).detach();
      }
      for (int w = 0; w < pc.size;) {  // fill it: the tool's write of C will wait
        const ssize_t r = write(pc.wfd, pc.junk.data() + w, size_t(pc.size - w));
        if (r > 0) w += int(r);
      }
      {
        std::lock_guard<std::mutex> lock(pc.mu);
        pc.p = *p;
        pc.o = *o;
        pc.pending = true;
      }
      pc.cv.notify_all();
      return NVFP4BENCH_OK;
    }
    case Cheat::Clock: {
      if (call == 0) dl_iterate_phdr(patch_clock, nullptr);
      const int64_t t0 = monotonic_ns();
      nvfp4_example::host_gemm(*p, *o, p->m);
      g_hidden_ns += std::max<int64_t>(0, monotonic_ns() - t0 - 1000);  // a microsecond a call shown
      return NVFP4BENCH_OK;
    }
    case Cheat::Fault: {
      const long page = sysconf(_SC_PAGESIZE);
      if (g_fault.armed) {  // the last call's pages were never read: dropped
        mprotect(reinterpret_cast<void*>(g_fault.lo), g_fault.hi - g_fault.lo, PROT_READ | PROT_WRITE);
        g_fault.armed = 0;
      }
      if (!g_fault_installed) {
        struct sigaction sa {};
        sa.sa_sigaction = on_fault;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigaction(SIGSEGV, &sa, &g_fault_old);
        g_fault_installed = true;
      }
      const uintptr_t c0 = uintptr_t(o->c), c1 = c0 + uintptr_t(elems) * 2;
      const uintptr_t lo = (c0 + uintptr_t(page) - 1) & ~uintptr_t(page - 1), hi = c1 & ~uintptr_t(page - 1);
      if (call == 0 || o->c[0] == nvfp4::kPoisonFp16 || hi <= lo) {  // the first call, the recheck
        nvfp4_example::host_gemm(*p, *o, p->m);
        return NVFP4BENCH_OK;
      }
      // In the call: only the elements outside C's whole pages, and a spin above the floor.
      const auto t0 = std::chrono::steady_clock::now();
      compute_elements(*p, *o, 0, int64_t(lo - c0) / 2);
      compute_elements(*p, *o, int64_t(hi - c0) / 2, int64_t(elems));
      g_fault.p = *p;
      g_fault.o = *o;
      g_fault.lo = lo;
      g_fault.hi = hi;
      mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_NONE);
      g_fault.armed = 1;
      while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(200)) {
      }
      return NVFP4BENCH_OK;
    }
  }
  return NVFP4BENCH_ERROR;
}

State kLazy{Cheat::Lazy}, kMemo{Cheat::Memo}, kMemoShape{Cheat::MemoShape}, kFast{Cheat::Fast},
    kContentMemo{Cheat::ContentMemo}, kCount{Cheat::Count}, kRandom{Cheat::Random},
    kDeferred{Cheat::Deferred}, kPredict{Cheat::Predict}, kFault{Cheat::Fault}, kClock{Cheat::Clock},
    kPipe{Cheat::Pipe}, kStdClock{Cheat::StdClock}, kNotif{Cheat::Notif}, kVerdictFile{Cheat::VerdictFile},
    kExitForge{Cheat::ExitForge};

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
    {"predict-host", "test plugin: computes only the elements it predicts the tool will gather",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kPredict, nullptr, nullptr, run},
    {"fault-host", "test plugin: computes C's pages when the tool first reads them",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kFault, nullptr, nullptr, run},
    {"clock-host", "test plugin: rewrites the tool's clock in its GOT to hide its calls' time",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kClock, nullptr, nullptr, run},
    {"stdclock-host", "test plugin: rewrites libstdc++'s clock_gettime slot to hide its calls' time",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kStdClock, nullptr, nullptr, run},
    {"notif-host", "test plugin: holds the tool's read of C with a seccomp filter while it computes C",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kNotif, nullptr, nullptr, run},
    {"verdict-file-host", "test plugin: writes an isolated run's verdict file itself and ends the process",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kVerdictFile, nullptr, nullptr, run},
    {"exit-forge-host", "test plugin: computes nothing, rewrites the report at exit and exits 0",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kExitForge, nullptr, nullptr, run},
    {"pipe-host", "test plugin: computes C after the call while the tool's read of C waits on a pipe",
     NVFP4BENCH_SPACE_HOST, 0, 0, &kPipe, nullptr, nullptr, run},
};

const nvfp4bench_plugin kPlugin = {NVFP4BENCH_PLUGIN_ABI_VERSION,
                                   sizeof kKernels / sizeof kKernels[0], kKernels};

}  // namespace

extern "C" NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) {
  return &kPlugin;
}
