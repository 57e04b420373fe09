// The options of one run (the default command, and each case of a sweep run in-process): their
// CLI11 definitions and the checks CLI11 cannot make. The sweep engine uses them too, which is
// why they live below src/sweep and src/app.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "src/case/run_case.hpp"

namespace nvfp4 {

struct RunOptions {
  CaseSpec spec;
  std::string dist = "gpumode";
  std::string json_path;
  std::string format = "json";  // --format: a writer (report/writer.hpp)
  std::string output;           // --output PATH, "-" for stdout
  std::string mode = "cold";    // --mode, or the shorthands below
  bool no_flush = false, rotate = false, graph = false;
  double noise_target_pct = 0.5;
  bool list = false;
  bool list_configs = false;  // --list-configs
  bool keep_samples = false;
  int device = 0;
  double timeout_s = 600;  // --timeout: a single run's watchdog (src/core/guard.hpp); 0: none
  int isolate = -1;  // --isolate 1, --no-isolate 0, -1: isolated when foreign code runs
  std::vector<std::string> kernel_libs;  // --kernel-lib, loaded by CommandLine::execute
  std::vector<std::string> kernel_pys;   // --kernel-py FILE.py[:FUNCTION], loaded there too
  CLI::Option* iters_option = nullptr;  // to tell a user's --iters from the default
  CLI::Option* warmup_option = nullptr;
  CLI::Option* max_time_option = nullptr;
  CLI::Option* mode_option = nullptr;
  CLI::Option* format_option = nullptr;
  CLI::Option* secret_option = nullptr;  // --secret-seed
  uint64_t secret_value = 0;
};

void add_run_options(CLI::App& app, RunOptions& o);
// Checks the values CLI11 cannot (names, ranges, shapes, output folders) without running or
// writing anything; throws usage_error (exit 2) with one line naming the option. Also used by
// sweeps run in-process.
void validate_options(RunOptions& o);
// Defaults that depend on the backend: on the host backend, unless asked, one warm-up run and
// compare's minimum sample count (kComparableSamples) or about a second of sampling, whichever
// comes first.
void apply_backend_defaults(RunOptions& o, const Context& ctx);

}  // namespace nvfp4
