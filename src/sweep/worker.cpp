#include "src/sweep/worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/case/run_options.hpp"
#include "src/core/error.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"
#include "src/report/json_writer.hpp"
#include "src/sweep/child.hpp"
#include "src/sweep/interrupt.hpp"
#include "src/sweep/records.hpp"

namespace nvfp4::sweep {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string SweepRun::keep_log(const SweepCase& c, const std::string& out, const std::string& err) {
  std::error_code ec;
  fs::create_directories(logs_dir, ec);
  const std::string dst = fmt::format("{}/case-{}.log", logs_dir, c.index);
  std::ofstream f(dst, std::ios::binary | std::ios::trunc);
  f << "--- stdout ---\n" << out << "--- stderr ---\n" << err;
  return f ? dst : std::string();
}

std::optional<json> SweepRun::run_isolated(const SweepCase& c, std::optional<int> device,
                                           json& sweep_info) {
  std::vector<std::string> argv = {exe};
  // The parent's plugins, so a case can name their kernels (src/registry/plugin_loader.hpp).
  for (const auto& lib : loaded_kernel_libraries()) argv.insert(argv.end(), {"--kernel-lib", lib});
  for (const auto& py : loaded_python_kernels()) argv.insert(argv.end(), {"--kernel-py", py});
  const auto args = c.run_args();
  argv.insert(argv.end(), args.begin(), args.end());
  if (device) argv.insert(argv.end(), {"--device", std::to_string(*device)});
  if (opt.keep_samples) argv.push_back("--samples");
  // The case's own timeout (timeout_for) governs: the child's single-run watchdog is off.
  argv.insert(argv.end(), {"--timeout", "0"});
  argv.push_back("--no-isolate");  // this process is the case's isolation
  const std::string report = fmt::format("{}/case-{}.json", tmpdir, c.index);
  const std::string out_log = fmt::format("{}/case-{}.out", tmpdir, c.index);
  const std::string err_log = fmt::format("{}/case-{}.err", tmpdir, c.index);
  argv.insert(argv.end(), {"--json", report});
  const ChildResult r =
      run_child(argv, out_log, err_log, timeout_for(c), &InterruptGuard::flag());
  if (r.how == ChildResult::How::Interrupted)
    return std::nullopt;  // not recorded: --resume reruns it
  sweep_info["wall_s"] = r.wall_s;
  sweep_info["child"] = r.describe();
  json rec;
  const bool has_report =
      r.how == ChildResult::How::Exited && r.exit_code <= 3 && fs::exists(report);
  if (has_report) {
    try {
      const json rep = json::parse(read_file(report));
      rec = rep.at("cases").at(0);
      rec["measurement"] = rep.value("measurement", json::object());
      if (rep.contains("device") && rep["device"].value("has_gpu", false))
        sweep_info["device_name"] = rep["device"].value("name", "");
    } catch (const json::exception& e) {
      rec = synthesized_record(c, "error",
                               fmt::format("the case's report is unreadable: {}", e.what()));
    }
  } else {
    const std::string why = error_line_of_log(read_file(err_log));
    if (r.how == ChildResult::How::Exited && r.exit_code == kExitBadInput)
      rec = synthesized_record(c, "not_supported", why);
    else if (r.how == ChildResult::How::Exited && r.exit_code <= 3)
      rec = synthesized_record(c, "error", why.empty() ? r.describe() : why);
    else  // crashed, timed out, exit code outside the tool's own
      rec = synthesized_record(c, "error",
                               r.describe() + (why.empty() ? "" : ": last output: " + why));
  }
  if (rec.value("disposition", "error") != "passed") {
    const std::string kept = keep_log(c, read_file(out_log), read_file(err_log));
    if (!kept.empty()) sweep_info["log"] = kept;
  }
  std::error_code ec;
  fs::remove(report, ec);
  fs::remove(out_log, ec);
  fs::remove(err_log, ec);
  return rec;
}

json SweepRun::run_here(const SweepCase& c, Context& ctx, json& sweep_info) {
  const auto t0 = std::chrono::steady_clock::now();
  json rec;
  try {
    std::vector<std::string> args = {"nvfp4bench"};
    const auto a = c.run_args();
    args.insert(args.end(), a.begin(), a.end());
    std::vector<const char*> argv;
    for (const auto& s : args) argv.push_back(s.c_str());
    CLI::App app;
    RunOptions ro;
    add_run_options(app, ro);
    app.parse(int(argv.size()), argv.data());
    validate_options(ro);
    apply_backend_defaults(ro, ctx);
    const CaseResult r = run_case(ro.spec, ctx);
    rec = to_json(r, opt.keep_samples);
    RunInfo info;  // the case's measurement settings, as a single run reports them
    info.measure = ro.spec.measure;
    info.clock_source = ctx.clock_source();
    info.clock_note = ctx.clock_note;
    rec["measurement"] = to_json(info)["measurement"];
  } catch (const CLI::ParseError& e) {
    rec = synthesized_record(c, "not_supported", e.what());
  } catch (const Error& e) {
    rec = synthesized_record(c, e.exit_code() == kExitBadInput ? "not_supported" : "error",
                             e.what());
  } catch (const std::exception& e) {
    rec = synthesized_record(c, "error", e.what());
  }
  sweep_info["wall_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

void SweepRun::worker(int slot, std::optional<int> device) {
  std::unique_ptr<Context> ctx;
  for (;;) {
    SweepCase c;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (next >= todo.size() || InterruptGuard::requested() || !fatal.empty()) return;
      c = todo[next++];
    }
    progress->started(c, slot);
    json info = {{"index", c.index},
                 {"name", c.name},
                 {"params", c.params()},
                 {"device", device ? json(*device) : json(nullptr)},
                 {"isolated", opt.isolate}};
    std::optional<json> rec;
    if (opt.isolate) {
      rec = run_isolated(c, device, info);
    } else {
      try {
        if (!ctx) ctx = std::make_unique<Context>(Context::create(device.value_or(0)));
        rec = run_here(c, *ctx, info);
      } catch (const std::exception& e) {
        rec = synthesized_record(c, "error", e.what());
      }
    }
    if (!rec) return;  // interrupted
    (*rec)["sweep"] = info;
    try {
      jsonl->append(*rec);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      fatal = e.what();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      records[c.index] = *rec;
    }
    progress->finished(c, slot, *rec);
  }
}

int run_workers(SweepRun& run, ProgressMode mode, int64_t in_shard_count, int64_t resumed,
                const std::vector<std::optional<int>>& devices) {
  InterruptGuard guard;
  Progress progress(mode, in_shard_count, resumed);
  run.progress = &progress;
  std::vector<std::thread> workers;
  for (size_t w = 0; w < devices.size(); ++w)
    workers.emplace_back([&run, w, d = devices[w]] { run.worker(int(w), d); });
  for (auto& t : workers) t.join();
  progress.stop();
  return InterruptGuard::signal();
}

}  // namespace nvfp4::sweep
