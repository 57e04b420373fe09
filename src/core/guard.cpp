#include "src/core/guard.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "src/core/asan.hpp"
#include "src/core/error.hpp"

namespace nvfp4::guard {
namespace {

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
constexpr int kTimedOut = -1;    // g_reason: the watchdog, not a signal
constexpr int kOtherThread = -2; // g_reason: a fatal signal on another thread (g_other_signal)
// How long a kernel's thread that crashed waits for the calling thread to take the report over
// (it may have left the call meanwhile, or block the nudge) before it ends the process itself.
constexpr int kOtherThreadWait_s = 5;

// What the handlers read: plain data set before g_active is raised.
char g_who[512];
pthread_t g_thread;
sigjmp_buf* g_jump = nullptr;
volatile sig_atomic_t g_reason = 0;
std::atomic<bool> g_active{false};
std::atomic<bool> g_tainted{false};
std::atomic<bool> g_foreign{false};  // a guarded call ran: foreign code is in the process
std::atomic<bool> g_ending{false};  // someone is ending the process: the others stand aside
// A fatal signal on another thread of a guarded call, waiting for the calling thread to report it.
std::atomic<bool> g_other_pending{false};
std::atomic<int> g_other_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free, "read by signal handlers");
static_assert(std::atomic<int>::is_always_lock_free, "read by signal handlers");

struct sigaction g_old[32];
// The handlers must run when a kernel overflowed the stack: on a stack of their own. Not under
// AddressSanitizer, whose siglongjmp from another stack than the thread's warns of false positives
// (google/sanitizers#189) on stderr; a stack overflow there ends the process as ASan reports it.
#if !NVFP4_ASAN
char g_alt_stack[64 * 1024];
#endif

char g_verdict_file[4096];  // the isolated child's verdict file; "" when not one
char g_verdict_token[64];   // what it writes beside the code

std::string g_timeout_what;  // "--timeout 5", set before the watchdog starts

std::mutex g_words_mutex;
std::function<void(const std::string&, bool)> g_last_words;
std::string g_subject = "the run";  // what the watchdog names when no guarded call runs

int alarm_signal() { return SIGRTMIN + 4; }  // the watchdog's nudge to a guarded call

// Async-signal-safe: write(2) of a few pieces.
void say(const char* a, const char* b = "", const char* c = "", const char* d = "") {
  for (const char* s : {"nvfp4bench: ", a, b, c, d, "\n"})
    if (::write(STDERR_FILENO, s, std::strlen(s)) < 0) return;
}

void last_words(const std::string& why, bool live) {
  std::function<void(const std::string&, bool)> f;
  {
    std::lock_guard<std::mutex> lock(g_words_mutex);
    f = g_last_words;
  }
  if (!f) return;
  try {
    f(why, live);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvfp4bench: the report could not be written: %s\n", e.what());
  }
}

// A thread that crashed never returns (it would crash again): once the calling thread has taken
// the report over it waits for the process to end; if that does not happen in time, it ends it.
[[noreturn]] void wait_to_be_ended(int sig) {
  for (int i = 0; i < kOtherThreadWait_s * 100 && g_other_pending.load(); ++i) {
    struct timespec hundredth = {0, 10000000};
    ::nanosleep(&hundredth, nullptr);
  }
  if (!g_other_pending.load())
    for (;;) ::pause();
  if (!g_ending.exchange(true)) {
    const char* abbrev = sigabbrev_np(sig);
    say(g_who, " crashed on one of its threads: SIG", abbrev ? abbrev : "?",
        " (the run could not report it)");
  }
  ::_exit(kExitRuntime);
}

extern "C" void on_fatal(int sig, siginfo_t* info, void* uc) {
  if (g_active.load() && g_jump && pthread_equal(pthread_self(), g_thread)) {
    g_reason = sig;
    g_active.store(false);
    siglongjmp(*g_jump, 1);
  }
  // Another thread of the kernel's: nothing to jump back to on it. The calling thread is made to
  // jump out of its call, as for a timeout, and reports the signal with the run's report; this
  // thread waits to be ended with the process (and so does any that crashes meanwhile).
  int none = 0;
  if (g_active.load() && g_other_signal.compare_exchange_strong(none, sig)) {
    g_other_pending.store(true);
    pthread_kill(g_thread, alarm_signal());
    wait_to_be_ended(sig);
  }
  if (g_other_signal.load() != 0)
    for (;;) ::pause();
  // Not a kernel's: what handled it before (AddressSanitizer's report, the default core dump).
  const struct sigaction& old = g_old[sig];
  if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
    old.sa_sigaction(sig, info, uc);
    return;
  }
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler) {
    old.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

extern "C" void on_alarm(int) {
  if (g_active.load() && g_jump && pthread_equal(pthread_self(), g_thread)) {
    g_reason = g_other_pending.load() ? kOtherThread : kTimedOut;
    g_active.store(false);
    siglongjmp(*g_jump, 1);
  }
}

// exit() or quick_exit() while a guarded call runs: the kernel's, not ours.
void kernel_exited(const char* how, int status) {
  if (!g_active.load()) return;
  const bool live = pthread_equal(pthread_self(), g_thread);
  g_active.store(false);
  if (g_ending.exchange(true)) {
    for (;;) ::pause();  // the watchdog is ending the process
  }
  const std::string why = fmt::format("{} called {}({}): a kernel may not end the tool's run", g_who, how, status);
  std::fprintf(stderr, "nvfp4bench: %s\n", why.c_str());
  last_words(why, live);
  end_now(kExitRuntime);
}
void on_exit_hook(int status, void*) { kernel_exited("exit", status); }
void on_quick_exit_hook() { kernel_exited("quick_exit", 0); }

// The watchdog of a single run.
struct Watchdog {
  std::mutex m;
  std::condition_variable cv;
  bool disarmed = false;
  std::thread thread;
} g_dog;

void watch(std::chrono::steady_clock::time_point deadline, const std::string& what) {
  std::unique_lock<std::mutex> lock(g_dog.m);
  if (g_dog.cv.wait_until(lock, deadline, [] { return g_dog.disarmed; })) return;
  if (g_active.load()) {
    // A guarded call: make it jump out, and let the command report it as an error.
    pthread_kill(g_thread, alarm_signal());
    if (g_dog.cv.wait_for(lock, std::chrono::seconds(2), [] { return g_dog.disarmed; })) return;
  }
  if (g_ending.exchange(true)) {
    // The main thread is writing its report: give it a while, then end anyway.
    if (g_dog.cv.wait_for(lock, std::chrono::seconds(30), [] { return g_dog.disarmed; })) return;
    end_now(kExitRuntime);
  }
  lock.unlock();
  std::string subject;
  {
    std::lock_guard<std::mutex> words(g_words_mutex);
    subject = g_subject;
  }
  const std::string why = fmt::format("{} did not finish within {} s{}{}", subject, what,
                                      g_active.load() ? ": still in " : "", g_active.load() ? g_who : "");
  std::fprintf(stderr, "nvfp4bench: %s\n", why.c_str());
  last_words(why, false);
  end_now(kExitRuntime);
}

extern "C" void on_interrupt(int sig) {
  if (g_ending.exchange(true)) return;
  const char* abbrev = sigabbrev_np(sig);
  say("interrupted by SIG", abbrev ? abbrev : "?");
  ::_exit(kExitInterrupted);
}

}  // namespace

void install() {
  static const bool done = [] {
#if !NVFP4_ASAN
    stack_t ss{};
    ss.ss_sp = g_alt_stack;
    ss.ss_size = sizeof g_alt_stack;
    ::sigaltstack(&ss, nullptr);
#endif
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal;
    sigemptyset(&sa.sa_mask);
    // NODEFER: the jump leaves the handler without sigreturn; the signal must not stay blocked.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    for (int sig : kFatal) ::sigaction(sig, &sa, &g_old[sig]);
    struct sigaction al {};
    al.sa_handler = on_alarm;
    sigemptyset(&al.sa_mask);
    al.sa_flags = SA_ONSTACK | SA_NODEFER;
    ::sigaction(alarm_signal(), &al, nullptr);
    ::on_exit(on_exit_hook, nullptr);
    ::at_quick_exit(on_quick_exit_hook);
    return true;
  }();
  (void)done;
}

void call_impl(const char* who, void (*fn)(void*), void* ctx) {
  if (g_active.load()) {
    fn(ctx);
    return;
  }
  install();
  g_foreign.store(true);
  sigjmp_buf jump;
  std::snprintf(g_who, sizeof g_who, "%s", who);
  g_thread = pthread_self();
  g_jump = &jump;
  if (sigsetjmp(jump, 0) == 0) {
    g_active.store(true);
    try {
      fn(ctx);
    } catch (...) {
      g_active.store(false);
      g_jump = nullptr;
      throw;
    }
    g_active.store(false);
    g_jump = nullptr;
    return;
  }
  g_jump = nullptr;
  g_tainted.store(true);
  // The signal may still be blocked where the kernel blocked it (abort() does): unblock ours.
  sigset_t ours;
  sigemptyset(&ours);
  for (int sig : kFatal) sigaddset(&ours, sig);
  sigaddset(&ours, alarm_signal());
  pthread_sigmask(SIG_UNBLOCK, &ours, nullptr);
  const int reason = g_reason;
  // The watchdog waits while this thread reports the timeout, rather than report it twice.
  if (reason == kTimedOut || reason == kOtherThread) g_ending.store(true);
  if (reason == kTimedOut)
    throw runtime_error(fmt::format("{} did not return within {} s", who, g_timeout_what));
  if (reason == kOtherThread) {
    const int sig = g_other_signal.load();
    g_other_signal.store(0);
    g_other_pending.store(false);  // taken over: the thread that crashed waits for the end
    throw runtime_error(fmt::format("{} crashed on one of its threads: {}", who, signal_name(sig)));
  }
  throw runtime_error(fmt::format("{} crashed: {}", who, signal_name(reason)));
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);  // glibc 2.32+
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

bool tainted() { return g_tainted.load(); }
bool foreign_code_ran() { return g_foreign.load(); }

// Copies variable `name` into `out` (empty when unset), overwrites its value in place and unsets it.
void take_and_scrub(const char* name, char* out, size_t size) {
  out[0] = '\0';
  char* v = std::getenv(name);
  if (!v) return;
  std::snprintf(out, size, "%s", v);
  std::memset(v, 'x', std::strlen(v));
  ::unsetenv(name);
}

void take_verdict_file() {
  take_and_scrub(kVerdictFileEnv, g_verdict_file, sizeof g_verdict_file);
  take_and_scrub(kVerdictTokenEnv, g_verdict_token, sizeof g_verdict_token);
}

bool isolated_child() { return g_verdict_file[0] != '\0'; }

void note_verdict(int code) {
  if (!isolated_child()) return;
  const int fd = ::open(g_verdict_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the parent then reports the run as ended without a verdict
  char text[96];
  const int n = std::snprintf(text, sizeof text, "%d %s\n", code, g_verdict_token);
  if (::write(fd, text, size_t(n)) < 0) {
  }
  ::close(fd);
}

void end_now(int code) {
  note_verdict(code);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

void set_last_words(std::function<void(const std::string&, bool)> f, const std::string& subject) {
  std::lock_guard<std::mutex> lock(g_words_mutex);
  g_last_words = std::move(f);
  g_subject = subject.empty() ? "the run" : subject;
}

void start_timeout(double seconds, const std::string& what) {
  stop_timeout();
  if (!(seconds > 0)) return;
  install();
  g_dog.disarmed = false;
  g_timeout_what = what;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  g_dog.thread = std::thread(watch, deadline, std::cref(g_timeout_what));
}

void stop_timeout() {
  if (!g_dog.thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(g_dog.m);
    g_dog.disarmed = true;
  }
  g_dog.cv.notify_all();
  g_dog.thread.join();
}

void install_interrupt_exit() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);  // a closed terminal or a dropped ssh: as SIGTERM
}

}  // namespace nvfp4::guard
