#include "src/app/commands.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <type_traits>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/guard.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"
#include "src/registry/registry.hpp"
#include "src/registry/resolve.hpp"
#include "src/report/writer.hpp"

namespace nvfp4 {

int list_command(const DeviceInfo& dev) {
  if (dev.has_gpu)
    std::printf("device: %s (compute capability %s)\n", dev.name.c_str(), dev.cc_string().c_str());
  else
    std::printf("device: none (%s): only host implementations run\n", dev.no_gpu_reason.c_str());
  const std::pair<Role, const char*> roles[] = {
      {Role::Kernel, "kernels"}, {Role::Reference, "references"}, {Role::Peer, "peers"}};
  // One name column for every entry, plugins' and Python kernels' long names included.
  int width = 16;
  for (const auto& e : registry()) width = std::max(width, int(e.name.size()));
  for (const auto& [role, title] : roles) {
    std::printf("\n%s:\n", title);
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      const auto g = e.make();
      Availability a = usable_here(*g, dev);
      std::printf("  %-*s %-13s %s\n", width, g->name().c_str(), a.ok ? "available" : "unavailable",
                  g->description().c_str());
      // The no-GPU reason is said once, above; not again under every device implementation.
      if (!a.ok && !dev.has_gpu && a.reason.rfind("no CUDA device", 0) == 0) a.reason = "needs a CUDA device";
      if (!a.ok) std::printf("  %-*s %-13s why: %s\n", width, "", "", a.reason.c_str());
    }
  }
  return kExitPass;
}

int list_configs_command(const CaseSpec& spec, const DeviceInfo& dev) {
  const Shape& s = spec.problem.shape;
  // A named kernel is asked even where it cannot run: its configurations are a matter of the
  // shape, and listing them on a machine without its GPU helps to plan a sweep.
  std::unique_ptr<Gemm> g = spec.kernel == "auto" ? nullptr : make_gemm(spec.kernel, Role::Kernel);
  if (!g) g = resolve("--kernel", spec.kernel, Role::Kernel, s, dev);
  if (const std::string se = g->shape_error(s); !se.empty())
    throw usage_error(fmt::format("--kernel '{}' does not support {}x{}x{} L={}: {}", g->name(), s.m,
                                  s.n, s.k, s.l, se));
  const std::vector<std::string> configs = g->configurations(s);
  if (configs.empty())
    std::printf("kernel '%s' has no selectable configurations for %lldx%lldx%lld L=%lld\n",
                g->name().c_str(), (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.l);
  for (const auto& c : configs) std::printf("%s\n", c.c_str());
  return kExitPass;
}

// With --output - the report owns the process's stdout: it goes to a copy of it, and stdout
// itself (file descriptor 1, which a plugin's printf writes to) is pointed at stderr.
static std::FILE* g_report_out = stdout;

static void give_stdout_to_the_report() {
  std::fflush(stdout);
  const int fd = ::dup(STDOUT_FILENO);
  if (fd < 0) return;
  std::FILE* f = ::fdopen(fd, "w");
  if (!f) {
    ::close(fd);
    return;
  }
  g_report_out = f;
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

void write_run_reports(const RunOptions& o, int argc, char** argv, const DeviceInfo& dev,
                       const std::string& clock_source, const std::string& clock_note,
                       const CaseResult& r) {
  if (o.json_path.empty() && o.output.empty()) return;
  std::FILE* human = o.output == "-" ? stderr : stdout;
  RunInfo info = RunInfo::collect(argc, argv, dev, o.spec.measure);
  info.seed = o.spec.problem.seed;
  info.tolerance = o.spec.tolerance;
  info.clock_source = clock_source;
  info.clock_note = clock_note;
  if (!o.json_path.empty()) {
    write_text_file_atomic(o.json_path, make_json_writer()->render(info, {r}, o.keep_samples));
    std::fprintf(human, "report    %s\n", o.json_path.c_str());
  }
  if (!o.output.empty()) {
    const std::string text = make_writer(o.format)->render(info, {r}, o.keep_samples);
    if (o.output == "-") {
      std::fputs(text.c_str(), g_report_out);
      std::fflush(g_report_out);
    } else {
      write_text_file_atomic(o.output, text);
      std::fprintf(human, "report    %s (%s)\n", o.output.c_str(), o.format.c_str());
    }
  }
}

CaseResult case_before_run(const RunOptions& o) {
  CaseResult before;
  before.problem = o.spec.problem;
  before.kernel = before.kernel_asked = o.spec.kernel;
  before.reference = o.spec.reference;
  before.tolerance = o.spec.tolerance;
  return before;
}

void mark_failed(CaseResult& r, Disposition d, const std::string& why) {
  // What was measured before the failure stays in the report (a reference timed, a first call
  // verified): the disposition and the message say the case failed, not the numbers' absence.
  r.disposition = d;
  r.message = why;
}

std::string run_subject(const RunOptions& o) {
  return fmt::format("the run of kernel '{}'", o.spec.kernel);
}

int run_command(RunOptions& o, int argc, char** argv) {
  validate_options(o);
  if (o.output == "-") give_stdout_to_the_report();
  for (const auto& lib : o.kernel_libs) (void)load_kernel_library(lib);  // no-op when loaded
  for (const auto& py : o.kernel_pys) (void)load_python_kernel(py);      // likewise
  Context ctx = Context::create(o.device);
  if (o.list) return list_command(ctx.dev);
  if (o.list_configs) return list_configs_command(o.spec, ctx.dev);
  if (!ctx.gpu()) {
    // Said first: every number below comes from the CPU.
    std::fprintf(o.output == "-" ? stderr : stdout,
                 "nvfp4bench: no CUDA device (%s): running on the host backend\n",
                 ctx.dev.no_gpu_reason.c_str());
    std::fflush(nullptr);  // first in the log even where stdout is a file and stderr is not
  }
  apply_backend_defaults(o, ctx);  // CPU runs are slow: fewer samples unless asked
  // With --output - the report owns stdout; the summary moves to stderr.
  std::FILE* human = o.output == "-" ? stderr : stdout;
  const auto write_reports = [&](const CaseResult& r) {
    write_run_reports(o, argc, argv, ctx.dev, ctx.clock_source(), ctx.clock_note, r);
  };
  CaseResult r;
  // A kernel that ends the process (exit, or the watchdog's --timeout outside a guarded call)
  // still leaves the report: the live case on the main thread, else what was known before it
  // started (the watchdog's thread must not read a case the main thread may be changing).
  const CaseResult before = case_before_run(o);
  guard::set_last_words([&](const std::string& why, bool live) {
    CaseResult last = live ? r : before;
    mark_failed(last, Disposition::Error, why);
    write_reports(last);
  }, run_subject(o));
  std::optional<Error> failed;  // a failure of the case itself: still reported, then rethrown
  o.spec.last_case_in_process = true;  // the process ends after this case
  try {
    run_case_into(o.spec, ctx, r);
  } catch (const Error& e) {
    mark_failed(r, e.exit_code() == kExitBadInput ? Disposition::NotSupported : Disposition::Error,
                e.what());
    failed = e;
  }
  guard::set_last_words({});
  if (!failed) {
    RunInfo info;  // the summary needs only the device
    info.device = ctx.dev;
    std::fputs(make_text_writer()->render(info, {r}, o.keep_samples).c_str(), human);
  }
  write_reports(r);
  if (failed) throw *failed;
  switch (r.disposition) {
    case Disposition::Passed: return kExitPass;
    case Disposition::Incorrect: return kExitVerifyFailed;
    case Disposition::NotSupported: return kExitBadInput;
    case Disposition::Error: return kExitRuntime;
  }
  return kExitRuntime;
}

Subcommands add_subcommands(CLI::App& app) {
  Subcommands subs;
  // one line per subcommand: subs.push_back(add_NAME_command(app));
  subs.push_back(add_compare_command(app));
  subs.push_back(add_sweep_command(app));
  subs.push_back(add_merge_command(app));
  subs.push_back(add_convert_command(app));
  return subs;
}

int dispatch_subcommand(Subcommands& subs, int argc, char** argv) {
  for (auto& s : subs)
    if (s.app->parsed()) return s.run(argc, argv);
  return -1;
}

}  // namespace nvfp4
