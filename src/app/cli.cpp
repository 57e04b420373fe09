#include "src/app/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "src/app/isolated_run.hpp"
#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"

namespace nvfp4 {

namespace {
constexpr const char* kExitCodes =
    "Exit codes: 0 every case passed; 1 verification failed (compare: regression); "
    "2 bad usage or input; 3 runtime failure (CUDA error, out of memory); 130 interrupted.";
// --kernel-lib / --kernel-py after a subcommand (CLI11 lists it as unexpected, value first):
// said as what it is, with where it goes. "" when argv holds none there.
std::string misplaced_loader(int argc, const char* const* argv, const Subcommands& subs) {
  for (int i = 1; i < argc; ++i)
    for (const auto& s : subs) {
      if (argv[i] != s.app->get_name()) continue;
      for (int j = i + 1; j < argc; ++j) {
        const std::string a = argv[j];
        for (const char* flag : {"--kernel-lib", "--kernel-py"}) {
          const std::string f = flag;
          if (a != f && a.rfind(f + "=", 0) != 0) continue;
          const std::string value = a == f ? (j + 1 < argc ? argv[j + 1] : "") : a.substr(f.size() + 1);
          return fmt::format("{} {}: given after the subcommand '{}'; it goes before it (nvfp4bench "
                             "{} {} {} ...), where every command loads it",
                             f, value, s.app->get_name(), f, value, s.app->get_name());
        }
      }
      return {};
    }
  return {};
}

}  // namespace

CommandLine::CommandLine()
    : app_("nvfp4bench: benchmark and validate NVFP4 block-scaled GEMM kernels") {
  app_.footer(kExitCodes);
  app_.set_version_flag("--version",
                        std::string("nvfp4bench ") + NVFP4_VERSION + " (" + NVFP4_GIT_REV + ")");
  add_run_options(app_, run_);
  subs_ = add_subcommands(app_);
}

int CommandLine::parse(int argc, const char* const* argv, std::string& message) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    message = app_.help();
    return kExitPass;
  } catch (const CLI::CallForAllHelp&) {
    message = app_.help("", CLI::AppFormatMode::All);
    return kExitPass;
  } catch (const CLI::CallForVersion& e) {
    message = std::string(e.what()) + "\n";
    return kExitPass;
  } catch (const CLI::ParseError& e) {
    // CLI11's messages name the option and the value; one line.
    message = std::string(e.what()) + " (see --help)";
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      // CLI11 lists the extras last first; said in the order they were given.
      std::vector<std::string> extra = app_.remaining();
      for (const auto& sub : subs_)
        for (const auto& r : sub.app->remaining()) extra.push_back(r);
      if (!extra.empty())
        message = fmt::format("The following argument{} not expected: {} (see --help)",
                              extra.size() == 1 ? " was" : "s were", fmt::join(extra, " "));
      if (std::string m = misplaced_loader(argc, argv, subs_); !m.empty()) message = m;
    }
    for (char& c : message)
      if (c == '\n') c = ' ';
    return kExitBadInput;
  }
  for (const auto& s : subs_) {
    if (!s.app->parsed()) continue;
    // Before a subcommand only what every command loads; a single run's option there would
    // be silently ignored.
    for (const CLI::Option* opt : app_.get_options()) {
      const std::string name = opt->get_name(false, true);
      if (opt->count() == 0 || name == "--kernel-lib" || name == "--kernel-py") continue;
      message = fmt::format("{}: an option of a single run, given before the subcommand '{}' "
                            "(which ignores it); put the subcommand's own options after it "
                            "(nvfp4bench {} --help); only --kernel-lib and --kernel-py go before",
                            name, s.app->get_name(), s.app->get_name());
      return kExitBadInput;
    }
    return kExecute;  // a subcommand checks its own values when it runs
  }
  try {
    validate_options(run_);
  } catch (const Error& e) {
    message = e.what();
    return e.exit_code();
  }
  return kExecute;
}

int CommandLine::execute(int argc, char** argv) {
  bool single = true;
  for (const auto& s : subs_) single = single && !s.app->parsed();
  // A single run ends with exit 3 or 130 and one line however its kernels end (guard.hpp); the
  // watchdog covers the loading of plugins and Python files too. Subcommands have their own.
  // Foreign code (or --isolate) runs in a child, before anything here loads it: what no guard
  // can catch (_exit, SIGKILL) then still gets a verdict (src/app/isolated_run.hpp).
  if (single && wants_isolation(run_)) return run_isolated(run_, argc, argv);
  struct Disarm {
    ~Disarm() { guard::stop_timeout(); }
  } disarm;
  if (single) {
    guard::install_interrupt_exit();
    guard::start_timeout(run_.timeout_s, fmt::format("--timeout {:g}", run_.timeout_s));
  }
  // Plugins first, for every command: --list, the run, and subcommands (a sweep hands the
  // libraries on to its child processes through loaded_kernel_libraries()).
  for (const auto& lib : run_.kernel_libs) (void)load_kernel_library(lib);
  for (const auto& py : run_.kernel_pys) (void)load_python_kernel(py);
  if (const int rc = dispatch_subcommand(subs_, argc, argv); rc >= 0) return rc;
  return run_command(run_, argc, argv);
}

}  // namespace nvfp4
