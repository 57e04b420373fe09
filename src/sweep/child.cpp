#include "src/sweep/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "src/core/guard.hpp"

namespace nvfp4::sweep {

std::string signal_name(int sig) { return guard::signal_name(sig); }

std::string ChildResult::describe() const {
  switch (how) {
    case How::Exited:
      return fmt::format("exited with code {}", exit_code);
    case How::Signaled:
      return fmt::format("crashed with signal {} ({})", signal, signal_name(signal));
    case How::TimedOut:
      return fmt::format("timed out after {:g} s", timeout_s);
    case How::Interrupted:
      return "interrupted";
    case How::SpawnFailed:
      return "could not be started: " + error;
  }
  return "unknown";
}

namespace {

// A log file for the child's stdout or stderr; -1 with `error` set when it cannot be opened.
int open_log(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) error = fmt::format("log file {}: {}", path, std::strerror(errno));
  return fd;
}

// The child's side of the fork: its own process group, default signal handling, the logs as
// stdout and stderr, then exec. Async-signal-safe calls only.
[[noreturn]] void exec_in_child(pid_t parent, int out_fd, int err_fd, const char* exe,
                                char* const* args) {
  ::setpgid(0, 0);                     // own group: killing it reaches grandchildren too
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the parent dying (even by SIGKILL) ends the case
  if (::getppid() != parent) ::_exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, nullptr);
  ::sigaction(SIGTERM, &dfl, nullptr);
  ::sigaction(SIGHUP, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (out_fd >= 0) ::dup2(out_fd, 1);
  if (err_fd >= 0) ::dup2(err_fd, 2);
  ::execv(exe, args);
  const char msg[] = "nvfp4bench sweep: exec of the case's command failed\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

// How the wait for the child ended.
struct Waited {
  int status = 0;
  bool killed_for_timeout = false, killed_for_stop = false;
  std::string error;  // waitpid failed
};

// Polls until the child exits, or kills its group and reaps it when the timeout passes or
// *stop becomes true.
Waited wait_for_child(pid_t pid, std::chrono::steady_clock::time_point t0, double timeout_s,
                      const std::atomic<bool>* stop) {
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Waited w;
  for (int polls = 0;; ++polls) {
    const pid_t got = ::waitpid(pid, &w.status, WNOHANG);
    if (got == pid) return w;
    if (got < 0 && errno != EINTR) {
      w.error = fmt::format("waitpid: {}", std::strerror(errno));
      return w;
    }
    const bool stop_now = stop && stop->load();
    const bool timeout_now = timeout_s > 0 && elapsed() >= timeout_s;
    if (stop_now || timeout_now) {
      w.killed_for_stop = stop_now;
      w.killed_for_timeout = !stop_now;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &w.status, 0) < 0 && errno == EINTR) {
      }
      return w;
    }
    // Short polls first (small cases end in milliseconds), then 20 ms.
    std::this_thread::sleep_for(std::chrono::microseconds(polls < 100 ? 1000 : 20000));
  }
}

// A child that died of SIGTERM/SIGINT (or exited 130, the tool's own interrupted code) while
// the sweep itself is stopping was stopped with it (Slurm signals every process of the step, a
// terminal's Ctrl-C the whole foreground group): interrupted, so --resume reruns it - not a crash.
// The sweep's own handler may run a moment after the child died: a short grace for the flag.
bool stopped_with_the_sweep(const Waited& w, const std::atomic<bool>* stop) {
  const bool by_signal = WIFSIGNALED(w.status) &&
                         (WTERMSIG(w.status) == SIGTERM || WTERMSIG(w.status) == SIGINT ||
                          WTERMSIG(w.status) == SIGHUP);
  const bool by_exit = WIFEXITED(w.status) && WEXITSTATUS(w.status) == 130;
  if (!stop || !(by_signal || by_exit)) return false;
  for (int i = 0; i < 50 && !stop->load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return stop->load();
}

void record_end(const Waited& w, ChildResult& r, const std::atomic<bool>* stop) {
  if (w.killed_for_stop || stopped_with_the_sweep(w, stop)) {
    r.how = ChildResult::How::Interrupted;
  } else if (w.killed_for_timeout) {
    r.how = ChildResult::How::TimedOut;
  } else if (WIFEXITED(w.status)) {
    r.how = ChildResult::How::Exited;
    r.exit_code = WEXITSTATUS(w.status);
  } else {
    r.how = ChildResult::How::Signaled;
    r.signal = WIFSIGNALED(w.status) ? WTERMSIG(w.status) : 0;
  }
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::string& out_path,
                      const std::string& err_path, double timeout_s,
                      const std::atomic<bool>* stop, const std::string& exe) {
  ChildResult r;
  r.timeout_s = timeout_s;
  // Everything the child needs is prepared before fork: after it, in a multi-threaded parent,
  // the child may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // An empty path: the child writes to this process's own stdout/stderr.
  const int out_fd = out_path.empty() ? -1 : open_log(out_path, r.error);
  if (out_fd < 0 && !out_path.empty()) return r;
  const int err_fd = err_path.empty() ? -1 : open_log(err_path, r.error);
  if (err_fd < 0 && !err_path.empty()) {
    if (out_fd >= 0) ::close(out_fd);
    return r;
  }
  const std::string& file = exe.empty() ? argv.at(0) : exe;
  const pid_t parent = ::getpid();
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.error = fmt::format("fork: {}", std::strerror(errno));
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    return r;
  }
  if (pid == 0) exec_in_child(parent, out_fd, err_fd, file.c_str(), args.data());
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);

  const Waited w = wait_for_child(pid, t0, timeout_s, stop);
  if (!w.error.empty()) {
    r.error = w.error;
    r.how = ChildResult::How::SpawnFailed;
    return r;
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  record_end(w, r, stop);
  // Grandchildren left in the group after the child exited on its own are killed too.
  ::kill(-pid, SIGKILL);
  return r;
}

}  // namespace nvfp4::sweep
