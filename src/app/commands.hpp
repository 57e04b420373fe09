// The CLI's commands: the default one (run one problem) and the subcommands.
// Adding a subcommand: one add_* call in add_subcommands and one branch in dispatch_subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <vector>
#include <string>

#include "src/case/run_options.hpp"

namespace nvfp4 {

// The default command: one problem (or --list). Returns the exit code.
int run_command(RunOptions& o, int argc, char** argv);
// The single run's --json and --output reports of `r` (nothing without either).
void write_run_reports(const RunOptions& o, int argc, char** argv, const DeviceInfo& dev,
                       const std::string& clock_source, const std::string& clock_note,
                       const CaseResult& r);
// What a single run's case is known to be before it runs: problem, kernel asked, reference.
CaseResult case_before_run(const RunOptions& o);
// The case as failed with `why`, keeping whatever it had measured.
void mark_failed(CaseResult& r, Disposition d, const std::string& why);
// "the run of kernel 'x'": how a line names a single run that did not end.
std::string run_subject(const RunOptions& o);
// `--list`: kernels, references and peers with their availability here.
int list_command(const DeviceInfo& dev);
// `--list-configs`: the configurations the kernel can run for the shape, one a line.
int list_configs_command(const CaseSpec& spec, const DeviceInfo& dev);

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
Subcommand add_convert_command(CLI::App& app);  // src/app/convert_command.cpp
// Runs the parsed subcommand and returns its exit code, or -1 when none was given.
int dispatch_subcommand(Subcommands& s, int argc, char** argv);

}  // namespace nvfp4
