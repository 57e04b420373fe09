#include "src/sweep/report.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/report/json_writer.hpp"
#include "src/report/report_reader.hpp"
#include "src/sweep/child.hpp"
#include "src/sweep/records.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

void print_case_list(const std::vector<SweepCase>& todo, const Shard& shard,
                     const SweepConfig& cfg) {
  for (const auto& c : todo) {
    std::string args;
    for (const auto& a : c.run_args()) args += " " + a;
    std::printf("%lld\t%s\t%s\n", (long long)c.index, c.label().c_str(), args.c_str() + 1);
  }
  std::printf("%lld cases (shard %s of %zu in %s, config hash %s)\n", (long long)todo.size(),
              shard.str().c_str(), cfg.cases.size(), cfg.path.c_str(), cfg.hash.c_str());
}

void print_start(const SweepOptions& o, const SweepConfig& cfg, const Shard& shard,
                 int64_t in_shard_count, size_t to_run, int64_t resumed,
                 const std::string& jsonl_path, int gpus,
                 const std::vector<std::optional<int>>& devices, const DeviceInfo& dev0) {
  std::printf(
      "sweep: %s: %lld cases%s, %lld to run%s; %s; records %s\n", cfg.path.c_str(),
      (long long)in_shard_count,
      shard.whole() ? ""
                    : fmt::format(" in shard {} (of {})", shard.str(), cfg.cases.size()).c_str(),
      (long long)to_run, resumed ? fmt::format(" ({} resumed)", resumed).c_str() : "",
      o.isolate ? "each case in a child process" : "in-process (--no-isolate)", jsonl_path.c_str());
  if (gpus == 0) {
    std::printf("sweep: no CUDA device (%s): one worker on the host backend\n",
                dev0.no_gpu_reason.c_str());
  } else {
    std::string list;
    for (const auto& d : devices) list += (list.empty() ? "" : ",") + std::to_string(d.value_or(0));
    std::printf("sweep: %zu worker%s on GPU %s (%d present)\n", devices.size(),
                devices.size() > 1 ? "s" : "", list.c_str(), gpus);
  }
  std::fflush(stdout);
}

void write_report(const SweepOptions& o, int argc, char** argv, const DeviceInfo& dev0,
                  const SweepConfig& cfg, const Shard& shard,
                  const std::vector<std::optional<int>>& devices, const OutputPaths& paths,
                  const SweepOutcome& out) {
  RunInfo info = RunInfo::collect(argc, argv, dev0, MeasureOptions{});
  info.clock_source = "none";
  info.clock_note = "sweep: each case's measurement names the clock source it used";
  json report = to_json(info);
  // measurement, seed and tolerance at the top are the single-run defaults; each case carries
  // its own (cases[].measurement, problem.seed, tolerance).
  std::vector<json> devs;
  for (const auto& d : devices) devs.push_back(d ? json(*d) : json("default"));
  report["sweep"] = {
      {"config", cfg.path},
      {"config_name", cfg.name},
      {"config_hash", cfg.hash},
      {"cases_in_config", cfg.cases.size()},
      {"shard", {{"index", shard.index}, {"count", shard.count}}},
      {"cases_in_shard", out.in_shard_count},
      {"cases_done", out.cases.size()},
      {"resumed", out.resumed},
      {"complete", out.complete},
      {"interrupted",
       out.signal_received ? json(signal_name(out.signal_received)) : json(nullptr)},
      {"isolate", o.isolate},
      {"devices", devs},
      {"jsonl", paths.jsonl},
      {"counts", disposition_counts(out.cases)}};
  report["cases"] = out.cases;
  write_text_file_atomic(paths.report, report.dump(2) + "\n");
  if (paths.formatted.empty()) return;
  // What `convert` writes of this report: one reader for every report kind, a single run's writers.
  write_text_file_atomic(paths.formatted, render_report(report, paths.report, o.format));
  std::printf("sweep: the report in %s: %s\n", o.format.c_str(), paths.formatted.c_str());
}

int finish(const SweepOutcome& out, const std::string& report_path, const std::string& fatal) {
  const json n = disposition_counts(out.cases);
  std::printf(
      "sweep: %zu of %lld cases: %d passed, %d incorrect, %d not supported, %d errors; report %s\n",
      out.cases.size(), (long long)out.in_shard_count, n["passed"].get<int>(),
      n["incorrect"].get<int>(), n["not_supported"].get<int>(), n["error"].get<int>(),
      report_path.c_str());
  if (!fatal.empty()) throw runtime_error(fatal);
  if (out.signal_received) {
    std::fprintf(stderr, "nvfp4bench: sweep: interrupted by %s: %lld cases not run; continue with --resume\n",
                signal_name(out.signal_received).c_str(),
                (long long)(out.in_shard_count - int64_t(out.cases.size())));
    return kExitInterrupted;
  }
  return exit_code_for(out.cases, out.complete);
}

}  // namespace nvfp4::sweep
