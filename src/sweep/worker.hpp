// The workers of a sweep: each takes the next case, runs it in a child process (or in this
// process with --no-isolate), appends its record to the JSONL and reports progress.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/case/run_case.hpp"
#include "src/sweep/jsonl.hpp"
#include "src/sweep/options.hpp"
#include "src/sweep/progress.hpp"

namespace nvfp4::sweep {

// What a sweep needs while it runs; shared by the workers.
struct SweepRun {
  const SweepOptions& opt;
  std::vector<SweepCase> todo;
  std::map<int64_t, nlohmann::json> records;  // case index -> record
  std::mutex mu;
  size_t next = 0;
  JsonlWriter* jsonl = nullptr;
  Progress* progress = nullptr;
  std::string exe, tmpdir, logs_dir;
  std::string fatal;  // a worker's failure that is not a case's (JSONL write failed)

  explicit SweepRun(const SweepOptions& o) : opt(o) {}

  double timeout_for(const SweepCase& c) const {
    if (opt.case_timeout_s) return *opt.case_timeout_s;
    return c.timeout_s.value_or(kDefaultCaseTimeoutS);
  }

  // Keeps the output of a case that did not pass beside the report; returns its path.
  std::string keep_log(const SweepCase& c, const std::string& out, const std::string& err);

  // One case in a child process: the tool itself with the case's single-run command line.
  std::optional<nlohmann::json> run_isolated(const SweepCase& c, std::optional<int> device,
                                             nlohmann::json& sweep_info);

  // One case in this process (--no-isolate): a CUDA fault here can end the whole sweep.
  nlohmann::json run_here(const SweepCase& c, Context& ctx, nlohmann::json& sweep_info);

  void worker(int slot, std::optional<int> device);
};

// One worker thread per device until the cases run out or a signal arrives; returns that
// signal (0: none).
int run_workers(SweepRun& run, ProgressMode mode, int64_t in_shard_count, int64_t resumed,
                const std::vector<std::optional<int>>& devices);

}  // namespace nvfp4::sweep
