#include "src/sweep/interrupt.hpp"

#include <signal.h>

namespace nvfp4::sweep {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "used from a signal handler");
struct sigaction g_old_int, g_old_term, g_old_hup;

extern "C" void on_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}
}  // namespace

InterruptGuard::InterruptGuard() {
  g_stop.store(false);
  g_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;  // the second signal takes the default action
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGHUP, &sa, &g_old_hup);  // a closed terminal or a dropped ssh: as SIGTERM
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

const std::atomic<bool>& InterruptGuard::flag() { return g_stop; }
int InterruptGuard::signal() { return g_signal.load(); }

}  // namespace nvfp4::sweep
