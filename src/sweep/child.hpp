// Running one case in a child process: its own process group (so a timeout or an interruption
// kills it with everything it started), output to a log file, a wall-clock limit.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace nvfp4::sweep {

struct ChildResult {
  enum class How { Exited, Signaled, TimedOut, Interrupted, SpawnFailed };
  How how = How::SpawnFailed;
  int exit_code = 0;  // How::Exited
  int signal = 0;     // How::Signaled
  double wall_s = 0;
  double timeout_s = 0;
  std::string error;  // How::SpawnFailed
  // "exited with code 3", "crashed with signal 11 (SIGSEGV)", "timed out after 600 s", ...
  std::string describe() const;
};

// Runs argv (argv[0]: the program's path) with stdout going to out_path and stderr to err_path
// (apart, so the error line is not buried under buffered output; an empty path leaves that
// stream as this process's). Polls until
// it exits, `timeout_s` passes (<= 0: no limit) or *stop becomes true; in the last two cases
// the child's process group is killed with SIGKILL and reaped. Safe to call from several threads.
// `exe` (default: argv[0]) is the file executed, argv[0] what the child sees as its name.
ChildResult run_child(const std::vector<std::string>& argv, const std::string& out_path,
                      const std::string& err_path, double timeout_s, const std::atomic<bool>* stop,
                      const std::string& exe = {});

// "SIGSEGV" for 11, "signal 64" when unnamed.
std::string signal_name(int sig);

}  // namespace nvfp4::sweep
