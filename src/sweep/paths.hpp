// Where a sweep writes: the report, its JSONL, the folder for kept logs, and a temporary folder
// for the cases' own reports.
#pragma once

#include <string>

#include "src/sweep/options.hpp"

namespace nvfp4::sweep {

struct OutputPaths {
  std::string report, jsonl, logs_dir;
  std::string formatted;  // --output: the report in --format; empty without
};

// The report, the JSONL, --output and the folder for kept logs; refused when one would overwrite
// the config, an input or another of them, or its folder cannot be written.
OutputPaths output_paths(const SweepOptions& o, const Shard& shard);

// A fresh folder for the cases' reports and logs, nvfp4bench-sweep-PID-XXXXXX under $TMPDIR when
// that is usable, else /tmp; the folders left there by killed sweeps of this user go first.
std::string make_tmpdir();

// This program's own path (/proc/self/exe): what the cases' child processes run.
std::string self_exe();

}  // namespace nvfp4::sweep
