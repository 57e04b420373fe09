// What a sweep says and leaves behind: the case list (--list-cases), the start lines, the final
// report (the run's information, the sweep's section, every record) and the summary line.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/device/device_info.hpp"
#include "src/sweep/config.hpp"
#include "src/sweep/options.hpp"
#include "src/sweep/paths.hpp"

namespace nvfp4::sweep {

// --list-cases: one line per case of the shard (index, label, single-run arguments), then a total.
void print_case_list(const std::vector<SweepCase>& todo, const Shard& shard,
                     const SweepConfig& cfg);

// What runs where: the case counts, isolation, the JSONL, the workers and their devices.
void print_start(const SweepOptions& o, const SweepConfig& cfg, const Shard& shard,
                 int64_t in_shard_count, size_t to_run, int64_t resumed,
                 const std::string& jsonl_path, int gpus,
                 const std::vector<std::optional<int>>& devices, const DeviceInfo& dev0);

// How the sweep went: for the final report and the summary line.
struct SweepOutcome {
  nlohmann::json cases = nlohmann::json::array();  // every record of this shard, in case order
  int64_t in_shard_count = 0, resumed = 0;
  bool complete = false;
  int signal_received = 0;
};

// The final report: the run's information, the sweep's own section, every record of the shard.
void write_report(const SweepOptions& o, int argc, char** argv, const DeviceInfo& dev0,
                  const SweepConfig& cfg, const Shard& shard,
                  const std::vector<std::optional<int>>& devices, const OutputPaths& paths,
                  const SweepOutcome& out);

// The summary line, then the exit code (a worker's own failure is thrown).
int finish(const SweepOutcome& out, const std::string& report_path, const std::string& fatal);

}  // namespace nvfp4::sweep
