// nvfp4bench: CLI wiring only. Each subcommand's work lives in src/app/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "app/commands.hpp"
#include "core/error.hpp"

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 every case passed; 1 verification failed (compare: regression); "
    "2 bad usage or input; 3 runtime failure (CUDA error, out of memory); 130 interrupted.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nvfp4bench: benchmark and validate NVFP4 block-scaled GEMM kernels"};
  app.footer(kExitCodes);
  app.set_version_flag("--version", std::string("nvfp4bench ") + NVFP4_VERSION + " (" + NVFP4_GIT_REV + ")");

  nvfp4::RunOptions run;
  nvfp4::add_run_options(app, run);
  nvfp4::Subcommands subs = nvfp4::add_subcommands(app);

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return 0;
    } catch (const CLI::CallForVersion& e) {
      std::cout << e.what() << "\n";
      return 0;
    } catch (const CLI::ParseError& e) {
      // One line naming the problem; CLI11's own messages name the option and value.
      std::fprintf(stderr, "nvfp4bench: %s (see --help)\n", e.what());
      return nvfp4::kExitBadInput;
    }
    if (const int rc = nvfp4::dispatch_subcommand(subs, argc, argv); rc >= 0) return rc;
    return nvfp4::run_command(run, argc, argv);
  } catch (const nvfp4::Error& e) {
    std::fprintf(stderr, "nvfp4bench: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nvfp4bench: out of host memory\n");
    return nvfp4::kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvfp4bench: internal error: %s\n", e.what());
    return nvfp4::kExitRuntime;
  }
}
