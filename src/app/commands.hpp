// The CLI's commands: the default one (run one problem) and the subcommands.
// Adding a subcommand: one add_* call in add_subcommands and one branch in dispatch_subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <vector>
#include <string>

#include "app/run_case.hpp"

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
  bool keep_samples = false;
  int device = 0;
  std::vector<std::string> kernel_libs;  // --kernel-lib, loaded by CommandLine::execute
  CLI::Option* iters_option = nullptr;  // to tell a user's --iters from the default
  CLI::Option* warmup_option = nullptr;
  CLI::Option* mode_option = nullptr;
  CLI::Option* format_option = nullptr;
};

void add_run_options(CLI::App& app, RunOptions& o);
// Checks the values CLI11 cannot (names, ranges, shapes, output folders) without running or
// writing anything; throws usage_error (exit 2) with one line naming the option. Also used by
// sweeps run in-process.
void validate_options(RunOptions& o);
// Defaults that depend on the backend: fewer samples on the host backend unless asked.
void apply_backend_defaults(RunOptions& o, const Context& ctx);
// The default command: one problem (or --list). Returns the exit code.
int run_command(RunOptions& o, int argc, char** argv);
// `--list`: kernels, references and peers with their availability here.
int list_command(const DeviceInfo& dev);

// A subcommand: its CLI11 app (options bound to state it owns) and what running it does.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int(int argc, char** argv)> run;  // returns the exit code
};
using Subcommands = std::vector<Subcommand>;
// Each subcommand lives in its own file (src/app/<name>_command.cpp) and is added here.
Subcommands add_subcommands(CLI::App& app);
// compare BASE.json NEW.json (src/app/compare_command.cpp)
Subcommand add_compare_command(CLI::App& app);
Subcommand add_sweep_command(CLI::App& app);  // src/app/sweep_command.cpp
Subcommand add_merge_command(CLI::App& app);  // src/app/merge_command.cpp
// Runs the parsed subcommand and returns its exit code, or -1 when none was given.
int dispatch_subcommand(Subcommands& s, int argc, char** argv);

}  // namespace nvfp4
