// The sweep engine: cases from a config, run one by one in child processes (or in-process),
// spread over the GPUs of the host, each finished case appended to a JSONL file, the final
// report written atomically, interruption and resumption.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
  bool list_cases = false;
  std::string progress = "auto";
};

constexpr double kDefaultCaseTimeoutS = 600;

// Runs a sweep; returns the exit code (README "Sweeps": 0, 1, 2, 3, 130).
int run_sweep(const SweepOptions& o, int argc, char** argv);

// The workers' devices: nullopt is the default device (or the host backend). Throws usage_error.
std::vector<std::optional<int>> resolve_devices(const std::string& spec, int device_count);

// 1 if any case is incorrect, else 3 if any error (or `complete` is false), else 2 if any case
// was not supported, else 0.
int exit_code_for(const nlohmann::json& cases, bool complete);

// {"passed": n, "incorrect": n, "not_supported": n, "error": n}
nlohmann::json disposition_counts(const nlohmann::json& cases);

// The record of a case whose child left no report (crash, timeout, usage error): the same
// shape as a report's case, with what was asked for.
nlohmann::json synthesized_record(const SweepCase& c, const std::string& disposition,
                                  const std::string& message);

// The one-line reason in a child's log: its last "nvfp4bench: ..." line, else its last line.
std::string error_line_of_log(const std::string& log_text);

}  // namespace nvfp4::sweep
