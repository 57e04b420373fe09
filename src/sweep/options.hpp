// What the sweep subcommand was asked (its flags), and the config they select.
#pragma once

#include <optional>
#include <string>

#include "src/sweep/config.hpp"

namespace nvfp4::sweep {

struct SweepOptions {
  std::string config_path;
  std::string json_path;   // final report; default: <config stem>[.shard-i-of-n].json
  std::string jsonl_path;  // default: the report's path with .jsonl
  bool resume = false;
  bool overwrite = false;
  bool isolate = true;
  std::optional<double> case_timeout_s;  // overrides the config's timeout_s
  std::string devices;                   // "", "all" or "0,1"
  std::string shard = "0/1";
  std::optional<std::string> peers;  // overrides the config's peers ("a,b", "all", "none")
  std::optional<std::string> kernels;  // overrides every case's kernels ("a,b")
  bool keep_samples = false;
  std::string format;  // --format: the report also written in this format ...
  std::string output;  // ... to --output (both or neither)
  bool list_cases = false;
  std::string progress = "auto";
};

constexpr double kDefaultCaseTimeoutS = 600;

// The config with --kernels and --peers applied: that changes what is measured, so the hash too.
SweepConfig load_sweep_config(const SweepOptions& o);

}  // namespace nvfp4::sweep
