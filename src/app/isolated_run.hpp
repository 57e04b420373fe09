// A single run in a child process of its own (docs/errors.md, "A kernel that ends the process").
// The guard (src/core/guard.hpp) turns exit(), fatal signals and hangs inside a kernel into the
// tool's own failure, but nothing in a process survives _exit() or SIGKILL: this parent runs the
// same command line as a child, which writes its exit code to a verdict file once its verdict
// and reports are out. A child that ends without one ended the run unknowingly: the parent
// says so in one line, writes the --json/--output report with the case as an error, exit 3.
#pragma once

#include "src/case/run_options.hpp"

namespace nvfp4 {

// --isolate, or --kernel-lib/--kernel-py without --no-isolate; never in the child itself.
bool wants_isolation(const RunOptions& o);

// Runs this command line again as a child and returns the exit code of the run.
int run_isolated(const RunOptions& o, int argc, char** argv);

}  // namespace nvfp4
