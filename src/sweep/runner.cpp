#include "src/sweep/runner.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "src/core/error.hpp"
#include "src/sweep/devices.hpp"
#include "src/sweep/interrupt.hpp"
#include "src/sweep/jsonl.hpp"
#include "src/sweep/paths.hpp"
#include "src/sweep/progress.hpp"
#include "src/sweep/report.hpp"
#include "src/sweep/resume.hpp"
#include "src/sweep/worker.hpp"

namespace nvfp4::sweep {

using nlohmann::json;
namespace fs = std::filesystem;

int run_sweep(const SweepOptions& o, int argc, char** argv) {
  const SweepConfig cfg = load_sweep_config(o);
  const Shard shard = parse_shard(o.shard);
  if (o.case_timeout_s && !(*o.case_timeout_s > 0))
    throw usage_error(fmt::format("--case-timeout {}: must be > 0 seconds", *o.case_timeout_s));
  if (o.case_timeout_s && !o.isolate)
    throw usage_error(fmt::format("--case-timeout {}: needs isolated cases (a case in this process "
                                  "cannot be stopped); drop --no-isolate or the timeout",
                                  *o.case_timeout_s));
  const ProgressMode mode = parse_progress_mode(o.progress);

  SweepRun run(o);
  run.todo = select_shard(cfg.cases, shard);
  SweepOutcome out;
  out.in_shard_count = int64_t(run.todo.size());
  if (o.list_cases) {
    print_case_list(run.todo, shard, cfg);
    return kExitPass;
  }
  if (run.todo.empty())
    throw usage_error(fmt::format("--shard {}: no case of {} falls in this shard ({} cases)",
                                  shard.str(), cfg.path, cfg.cases.size()));
  const OutputPaths paths = output_paths(o, shard);
  run.logs_dir = paths.logs_dir;
  const int gpus = cuda_device_count();
  const auto devices = resolve_devices(o.devices, gpus);

  // The JSONL: a header line naming the config, then one line per finished case.
  const json header = jsonl_header(cfg, shard);
  const bool exists = fs::exists(paths.jsonl) && fs::file_size(paths.jsonl) > 0;
  if (exists && !o.resume && !o.overwrite)
    throw usage_error(
        fmt::format("{} exists (a sweep's records): pass --resume to continue it, or "
                    "--overwrite to start again",
                    paths.jsonl));
  // Held until the sweep returns: one writer per JSONL (a second sweep is refused with our pid).
  const JsonlLock lock(paths.jsonl);
  if (exists && o.resume)
    out.resumed = resume_from(paths.jsonl, header, cfg, shard, run);
  else if (exists)
    truncate_file(paths.jsonl, 0);  // not removed: the lock stays on this file
  JsonlWriter jsonl(paths.jsonl);
  if (!(exists && o.resume)) jsonl.append(header);
  run.jsonl = &jsonl;

  const DeviceInfo dev0 = query_device(devices.front().value_or(0));
  print_start(o, cfg, shard, out.in_shard_count, run.todo.size(), out.resumed, paths.jsonl, gpus,
              devices, dev0);
  run.tmpdir = make_tmpdir();
  run.exe = self_exe();
  out.signal_received = run_workers(run, mode, out.in_shard_count, out.resumed, devices);
  std::error_code ec;
  fs::remove_all(run.tmpdir, ec);

  for (const auto& [idx, rec] : run.records) out.cases.push_back(rec);
  out.complete = int64_t(run.records.size()) == out.in_shard_count;
  try {
    write_report(o, argc, argv, dev0, cfg, shard, devices, paths, out);
  } catch (const Error& e) {
    // A full disk stops the records first and then the report: both are said, and where the
    // finished cases are.
    if (!run.fatal.empty())
      throw runtime_error(fmt::format("{} (after {} of {} cases); the report could not be written "
                                      "either: {}", run.fatal, out.cases.size(),
                                      out.in_shard_count, e.what()));
    throw runtime_error(fmt::format("{}; the {} finished cases are recorded in {}: make room and "
                                    "run the sweep again with --resume to write the report",
                                    e.what(), out.cases.size(), paths.jsonl));
  }
  return finish(out, paths.report, run.fatal);
}

}  // namespace nvfp4::sweep
