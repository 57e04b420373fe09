// The sweep engine: cases from a config, run one by one in child processes (or in-process),
// spread over the GPUs of the host, each finished case appended to a JSONL file, the final
// report written atomically, interruption and resumption. The parts, one file each: options
// (the flags, the config they select), paths, devices, worker (the cases run), records, resume,
// report (what is printed and written).
#pragma once

#include "src/sweep/options.hpp"

namespace nvfp4::sweep {

// Runs a sweep; returns the exit code (docs/sweeps.md: 0, 1, 2, 3, 130).
int run_sweep(const SweepOptions& o, int argc, char** argv);

}  // namespace nvfp4::sweep
