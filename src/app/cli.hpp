// The command line, parsed and checked without running anything: main runs what it parsed, and
// the fuzz target (fuzz/fuzz_cli.cpp) parses arbitrary argument vectors with it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "src/app/commands.hpp"

namespace nvfp4 {

class CommandLine {
 public:
  // parse(): a command was parsed and is ready to execute().
  static constexpr int kExecute = -1;

  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv and checks every value (shapes, names of distributions, tolerances, output
  // folders); loads nothing, touches no device and writes nothing. Returns kExecute, or the
  // exit code to return at once with the text to print in `message`: 0 for --help/--version
  // (stdout), kExitBadInput with one line naming the problem (stderr).
  int parse(int argc, const char* const* argv, std::string& message);
  // Runs what parse() accepted; returns the exit code. Errors propagate as exceptions.
  int execute(int argc, char** argv);

  const RunOptions& run_options() const { return run_; }

 private:
  CLI::App app_;
  RunOptions run_;
  Subcommands subs_;
};

}  // namespace nvfp4
