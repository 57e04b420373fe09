#include "src/sweep/runner.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "src/case/run_options.hpp"
#include "src/core/error.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"
#include "src/registry/registry.hpp"
#include "src/report/compare.hpp"
#include "src/report/json_report.hpp"
#include "src/sweep/child.hpp"
#include "src/sweep/interrupt.hpp"
#include "src/sweep/jsonl.hpp"
#include "src/sweep/progress.hpp"
#include "src/sweep/record_check.hpp"

namespace nvfp4::sweep {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::optional<int>> resolve_devices(const std::string& spec, int device_count) {
  if (spec.empty()) return {std::nullopt};
  if (spec == "all") {
    if (device_count <= 0) return {std::nullopt};
    std::vector<std::optional<int>> out;
    for (int d = 0; d < device_count; ++d) out.push_back(d);
    return out;
  }
  if (device_count <= 0)
    throw usage_error(
        fmt::format("--devices {}: no CUDA device here (use all, or leave it out, to "
                    "run on the host backend)",
                    spec));
  std::vector<std::optional<int>> out;
  std::set<int> seen;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(item, &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || d < 0)
      throw usage_error(
          fmt::format("--devices {}: '{}' is not a device ordinal (expected all or a "
                      "list like 0,1)",
                      spec, item));
    if (d >= device_count)
      throw usage_error(
          fmt::format("--devices {}: device {} requested, {} present", spec, d, device_count));
    if (!seen.insert(d).second)
      throw usage_error(fmt::format("--devices {}: device {} listed twice", spec, d));
    out.push_back(d);
  }
  if (out.empty())
    throw usage_error(fmt::format("--devices '{}': expected all or a list like 0,1", spec));
  return out;
}

json disposition_counts(const json& cases) {
  json counts = {{"passed", 0}, {"incorrect", 0}, {"not_supported", 0}, {"error", 0}};
  for (const auto& c : cases) {
    const std::string d = c.value("disposition", "error");
    counts[counts.contains(d) ? d : "error"] =
        counts[counts.contains(d) ? d : "error"].get<int>() + 1;
  }
  return counts;
}

int exit_code_for(const json& cases, bool complete) {
  const json n = disposition_counts(cases);
  if (n["incorrect"].get<int>() > 0) return kExitVerifyFailed;
  if (n["error"].get<int>() > 0 || !complete) return kExitRuntime;
  if (n["not_supported"].get<int>() > 0) return kExitBadInput;
  return kExitPass;
}

json synthesized_record(const SweepCase& c, const std::string& disposition,
                        const std::string& message) {
  // The same keys as a case of the report (schemas/report.schema.json), from what was asked.
  TensorBytes b;
  try {
    b = TensorBytes::of(c.shape);
  } catch (const Error&) {  // a shape whose sizes overflow: no byte counts
  }
  const Tolerance def;
  return {{"problem",
           {{"m", c.shape.m},
            {"n", c.shape.n},
            {"k", c.shape.k},
            {"l", c.shape.l},
            {"dist", c.dist},
            {"seed", c.seed},
            {"out_dtype", "fp16"},
            {"flops", c.shape.flops()},
            {"bytes",
             {{"a", b.a},
              {"b", b.b},
              {"sfa_blocked", b.sfa_blocked},
              {"sfb_blocked", b.sfb_blocked},
              {"c", b.c},
              {"min_traffic", b.min_traffic()}}}}},
          // Not resolved (the case failed before it said which kernel runs): name is what was
          // asked; compare pairs it with the base's case of the same problem and "asked".
          {"kernel", {{"name", c.kernel}, {"asked", c.kernel}, {"description", ""}}},
          {"reference", {{"name", c.reference}, {"description", ""}}},
          {"disposition", disposition},
          {"message", message},
          {"tolerance", {{"rtol", c.rtol.value_or(def.rtol)}, {"atol", c.atol.value_or(def.atol)}}},
          {"notes", json::array()},
          {"peers", json::array()}};
}

std::string error_line_of_log(const std::string& log_text) {
  std::stringstream ss(log_text);
  std::string line, last, tagged;
  while (std::getline(ss, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    if (line.rfind("nvfp4bench: ", 0) == 0) tagged = line.substr(12);
  }
  std::string out = tagged.empty() ? last : tagged;
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

void check_writable_folder(const std::string& flag, const std::string& path) {
  const fs::path parent = fs::absolute(path).parent_path();
  if (!fs::is_directory(parent) || access(parent.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("{} {}: folder {} does not exist or is not writable", flag, path,
                                  parent.string()));
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// What a sweep needs while it runs; shared by the workers.
struct SweepRun {
  const SweepOptions& opt;
  std::vector<SweepCase> todo;
  std::map<int64_t, json> records;  // case index -> record
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
  std::string keep_log(const SweepCase& c, const std::string& out, const std::string& err) {
    std::error_code ec;
    fs::create_directories(logs_dir, ec);
    const std::string dst = fmt::format("{}/case-{}.log", logs_dir, c.index);
    std::ofstream f(dst, std::ios::binary | std::ios::trunc);
    f << "--- stdout ---\n" << out << "--- stderr ---\n" << err;
    return f ? dst : std::string();
  }

  // One case in a child process: the tool itself with the case's single-run command line.
  std::optional<json> run_isolated(const SweepCase& c, std::optional<int> device,
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

  // One case in this process (--no-isolate): a CUDA fault here can end the whole sweep.
  json run_here(const SweepCase& c, Context& ctx, json& sweep_info) {
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

  void worker(int slot, std::optional<int> device) {
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
};

std::string default_report_path(const SweepOptions& o, const Shard& shard) {
  std::string stem = "sweep-" + fs::path(o.config_path).stem().string();
  if (!shard.whole()) stem += fmt::format(".shard-{}-of-{}", shard.index, shard.count);
  return stem + ".json";
}

std::string jsonl_path_for(const std::string& report) {
  fs::path p(report);
  return (p.extension() == ".json" ? p.replace_extension(".jsonl") : fs::path(report + ".jsonl"))
      .string();
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// --kernels a,b: the names, each auto or a kernel of this process (built in, --kernel-lib,
// --kernel-py): an unknown one is refused here, not once per case.
std::vector<std::string> kernel_list(const std::string& text) {
  const std::vector<std::string> names = split_list(text);
  if (names.empty())
    throw usage_error(fmt::format("--kernels '{}': expected a comma-separated list of kernel names",
                                  text));
  const std::vector<std::string> known = names_of(Role::Kernel);
  for (const auto& n : names)
    if (n != "auto" && std::find(known.begin(), known.end(), n) == known.end())
      throw usage_error(fmt::format("--kernels: '{}' is not a kernel; expected auto or one of: {} "
                                    "(plugins and Python kernels: load them with --kernel-lib / "
                                    "--kernel-py before the subcommand)",
                                    n, fmt::join(known, ", ")));
  return names;
}

// The config with --kernels and --peers applied: that changes what is measured, so the hash too.
SweepConfig load_sweep_config(const SweepOptions& o) {
  SweepConfig cfg = o.kernels ? load_config(o.config_path, kernel_list(*o.kernels))
                              : load_config(o.config_path);
  if (o.peers) {  // --peers on the sweep's command line replaces the config's peers
    const auto peers = *o.peers == "none" ? std::vector<std::string>{} : split_list(*o.peers);
    (void)resolve_peer_names(peers);  // an unknown name: refused here, not once per child
    for (auto& c : cfg.cases) c.peers = peers;
    cfg.hash = config_hash(cfg.cases);
  }
  return cfg;
}

// --list-cases: one line per case of the shard (index, label, single-run arguments), then a total.
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

struct OutputPaths {
  std::string report, jsonl, logs_dir;
};

// The report, the JSONL and the folder for kept logs; refused when the report or JSONL would
// overwrite the config or its folder cannot be written.
OutputPaths output_paths(const SweepOptions& o, const Shard& shard) {
  OutputPaths out;
  out.report = o.json_path.empty() ? default_report_path(o, shard) : o.json_path;
  out.jsonl = o.jsonl_path.empty() ? jsonl_path_for(out.report) : o.jsonl_path;
  for (const std::string& p : {out.report, out.jsonl}) {
    std::error_code ec;
    if (fs::equivalent(p, o.config_path, ec))
      throw usage_error(
          fmt::format("--json/--jsonl {}: is the config itself; choose another path", p));
  }
  check_writable_folder("--json", out.report);
  check_writable_folder("--jsonl", out.jsonl);
  check_output_file("--json", out.report);
  check_output_file("--jsonl", out.jsonl);
  std::vector<NamedPath> inputs = {{"the config", o.config_path}};
  for (const auto& lib : loaded_kernel_libraries()) inputs.push_back({"--kernel-lib", lib});
  for (const auto& py : loaded_python_kernels())  // PATH:FUNCTION
    inputs.push_back({"--kernel-py", py.substr(0, py.rfind(':'))});
  check_outputs_distinct({{"--json", out.report}, {"--jsonl", out.jsonl}}, inputs);
  out.logs_dir =
      (fs::absolute(out.report).parent_path() / (fs::path(out.report).stem().string() + ".logs"))
          .string();
  return out;
}

// The JSONL's first line: which config (and shard) its records belong to.
json jsonl_header(const SweepConfig& cfg, const Shard& shard) {
  return {{"nvfp4bench_sweep", 1},
          {"config", cfg.path},
          {"config_name", cfg.name},
          {"config_hash", cfg.hash},
          {"shard", {{"index", shard.index}, {"count", shard.count}}},
          {"cases_in_config", cfg.cases.size()}};
}

// --resume: checks that the JSONL was written for this config and shard, drops a torn last
// line, takes its records into run.records and their cases out of run.todo; returns how many.
int64_t resume_from(const std::string& jsonl_path, const json& header, const SweepConfig& cfg,
                    const Shard& shard, SweepRun& run) {
  JsonlContents prev = read_jsonl(jsonl_path);
  if (prev.records.empty() || !prev.records[0].contains("nvfp4bench_sweep"))
    throw usage_error(
        fmt::format("--resume: {} is not a sweep's JSONL (no header line)", jsonl_path));
  const json& h = prev.records[0];
  const std::string hw = fmt::format("--resume: {} line 1: ", jsonl_path);
  const std::string h_hash = json_need(h, "config_hash", json::value_t::string, hw).get<std::string>();
  const json& h_shard = json_need(h, "shard", json::value_t::object, hw);
  for (const char* k : {"index", "count"}) (void)json_need(h_shard, k, json::value_t::number_integer, hw + "shard");
  if (h_hash != cfg.hash)
    throw usage_error(
        fmt::format("--resume: {} was written for another config (hash {}, this one {}); "
                    "use the original config or --overwrite",
                    jsonl_path, h_hash, cfg.hash));
  if (h_shard != header["shard"])
    throw usage_error(fmt::format("--resume: {} was written for shard {}/{}, not {}", jsonl_path,
                                  h["shard"].value("index", 0), h["shard"].value("count", 1),
                                  shard.str()));
  if (prev.torn_tail) {
    std::printf("sweep: %s: dropping a torn last line (a write cut short)\n", jsonl_path.c_str());
    truncate_file(jsonl_path, prev.valid_bytes);
  }
  std::map<int64_t, size_t> line_of;  // case index -> the line that recorded it
  for (size_t i = 1; i < prev.records.size(); ++i) {
    const json& r = prev.records[i];
    const size_t line = i + 1;  // read_jsonl keeps every line (a damaged one is an error)
    const json* idx_j = r.contains("sweep") && r["sweep"].is_object() && r["sweep"].contains("index")
                            ? &r["sweep"]["index"] : nullptr;
    if (!idx_j || !idx_j->is_number_integer() || !r.contains("disposition"))
      throw usage_error(fmt::format("--resume: {} line {}: not a case record (no sweep.index or "
                                    "disposition); the file was changed by hand or by another "
                                    "program: fix it or --overwrite", jsonl_path, line));
    const int64_t idx = idx_j->get<int64_t>();
    if (const auto it = line_of.find(idx); it != line_of.end())
      throw usage_error(fmt::format("--resume: {} line {}: case {} is recorded twice (first on line "
                                    "{}); remove one or --overwrite", jsonl_path, line, idx, it->second));
    line_of[idx] = line;
    // A record is trusted only as a case of this config and shard, in a report case's shape.
    const std::string where = fmt::format("--resume: {} line {}: ", jsonl_path, line);
    if (idx < 0 || idx >= int64_t(cfg.cases.size()) || !in_shard(idx, shard))
      throw usage_error(fmt::format("{}sweep.index {}: not a case of {} (cases 0 to {}, shard {}); "
                                    "fix the file or --overwrite", where, idx, cfg.path,
                                    int64_t(cfg.cases.size()) - 1, shard.str()));
    check_case_shape(r, where);
    check_record_claims(r, cfg.cases[size_t(idx)], where);
    run.records[idx] = r;
  }
  std::vector<SweepCase> rest;
  for (const auto& c : run.todo)
    if (!run.records.count(c.index)) rest.push_back(c);
  run.todo = std::move(rest);
  return int64_t(run.records.size());
}

// What runs where: the case counts, isolation, the JSONL, the workers and their devices.
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

// A fresh folder for the cases' reports and logs: under $TMPDIR when that is usable, else /tmp.
std::string make_tmpdir() {
  if (const char* t = std::getenv("TMPDIR"); t && *t) {
    std::string s = std::string(t) + "/nvfp4bench-sweep-XXXXXX";
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) return buf.data();
  }
  char tmpl[] = "/tmp/nvfp4bench-sweep-XXXXXX";
  if (!mkdtemp(tmpl)) throw runtime_error("cannot create a temporary folder for the cases' reports");
  return tmpl;
}

// One worker thread per device until the cases run out or a signal arrives; returns that
// signal (0: none).
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

// How the sweep went: for the final report and the summary line.
struct SweepOutcome {
  json cases = json::array();  // every record of this shard, in case order
  int64_t in_shard_count = 0, resumed = 0;
  bool complete = false;
  int signal_received = 0;
};

// The final report: the run's information, the sweep's own section, every record of the shard.
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
}

// The summary line, then the exit code (a worker's own failure is thrown).
int finish(const SweepOutcome& out, const std::string& report_path, const std::string& fatal) {
  const json n = disposition_counts(out.cases);
  std::printf(
      "sweep: %zu of %lld cases: %d passed, %d incorrect, %d not supported, %d errors; report %s\n",
      out.cases.size(), (long long)out.in_shard_count, n["passed"].get<int>(),
      n["incorrect"].get<int>(), n["not_supported"].get<int>(), n["error"].get<int>(),
      report_path.c_str());
  if (!fatal.empty()) throw runtime_error(fatal);
  if (out.signal_received) {
    std::printf("sweep: interrupted by %s: %lld cases not run; continue with --resume\n",
                signal_name(out.signal_received).c_str(),
                (long long)(out.in_shard_count - int64_t(out.cases.size())));
    return kExitInterrupted;
  }
  return exit_code_for(out.cases, out.complete);
}

}  // namespace

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
  write_report(o, argc, argv, dev0, cfg, shard, devices, paths, out);
  return finish(out, paths.report, run.fatal);
}

}  // namespace nvfp4::sweep
