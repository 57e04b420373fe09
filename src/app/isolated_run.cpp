#include "src/app/isolated_run.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "src/app/commands.hpp"
#include "src/case/verdict.hpp"
#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/sweep/child.hpp"
#include "src/sweep/interrupt.hpp"
#include "src/sweep/paths.hpp"

namespace nvfp4 {

namespace fs = std::filesystem;

namespace {

// The child's own --timeout watchdog ends a hung run with its report and line; the parent's
// limit only backs it up (a child stuck where even the watchdog cannot end it).
constexpr double kBackstopGrace_s = 60;

// The exit code the child wrote, if it wrote one with the run's token.
std::optional<int> read_verdict(const std::string& path, const std::string& token) {
  std::ifstream in(path);
  int code = 0;
  std::string said;
  if (in >> code >> said && said == token) return code;
  return std::nullopt;
}

}  // namespace

bool wants_isolation(const RunOptions& o) {
  if (guard::isolated_child()) return false;
  if (o.isolate >= 0) return o.isolate == 1;
  return !o.kernel_libs.empty() || !o.kernel_pys.empty();
}

int run_isolated(const RunOptions& o, int argc, char** argv) {
  const std::string dir = sweep::make_tmpdir();
  const std::string verdict = dir + "/verdict";
  // The child runs this very program, seeing the command line as it was typed (its report's argv).
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) args.emplace_back(argv[i]);
  const std::string token = fmt::format("{:016x}", secret_from_os());
  ::setenv(guard::kVerdictFileEnv, verdict.c_str(), 1);
  ::setenv(guard::kVerdictTokenEnv, token.c_str(), 1);
  sweep::ChildResult r;
  int interrupted_by = 0;
  {
    sweep::InterruptGuard interrupt;  // SIGINT/SIGTERM/SIGHUP: the child's group is killed, then 130
    r = sweep::run_child(args, "", "", o.timeout_s > 0 ? o.timeout_s + kBackstopGrace_s : 0,
                         &sweep::InterruptGuard::flag(), sweep::self_exe());
    interrupted_by = sweep::InterruptGuard::signal();
  }
  ::unsetenv(guard::kVerdictFileEnv);
  ::unsetenv(guard::kVerdictTokenEnv);
  const std::optional<int> code = read_verdict(verdict, token);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (r.how == sweep::ChildResult::How::Interrupted) {
    std::fprintf(stderr, "nvfp4bench: interrupted by %s\n", guard::signal_name(interrupted_by).c_str());
    return kExitInterrupted;
  }
  if (code) return *code;
  if (r.how == sweep::ChildResult::How::SpawnFailed)
    throw runtime_error(fmt::format("the isolated run {}", r.describe()));
  // Stopped by a signal sent to it alone: it said so itself ("interrupted by ...").
  if (r.how == sweep::ChildResult::How::Exited && r.exit_code == kExitInterrupted)
    return kExitInterrupted;
  const std::string why =
      fmt::format("{} ended the process without a verdict: it {} (--isolate); a kernel may not "
                  "end the tool's run", run_subject(o), r.describe());
  std::fprintf(stderr, "nvfp4bench: %s\n", why.c_str());
  CaseResult c = case_before_run(o);
  mark_failed(c, Disposition::Error, why);
  write_run_reports(o, argc, argv, query_device(o.device), "none", "", c);
  return kExitRuntime;
}

}  // namespace nvfp4
