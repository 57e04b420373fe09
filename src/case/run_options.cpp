#include "src/case/run_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "src/case/number_options.hpp"
#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/registry/resolve.hpp"
#include "src/report/compare.hpp"
#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

// The host backend's default cap on sampling (and warm-up), where --iters and --max-time are not
// given: a big problem's few samples are then "not comparable" rather than a long wait.
constexpr double kHostSamplingSeconds = 1.0;

// The problem, the implementations and the verification.
void add_problem_options(CLI::App& app, RunOptions& o) {
  CaseSpec& s = o.spec;
  s.problem.shape = {128, 7168, 16384, 1};
  app.add_option("--m", s.problem.shape.m, "rows of A and C")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--n", s.problem.shape.n, "rows of B, columns of C")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--k", s.problem.shape.k, "reduction size, a multiple of 16")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--l", s.problem.shape.l, "batch count")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--seed", s.problem.seed, "seed of the operand generator")->check(integer_text<uint64_t>())->capture_default_str();
  app.add_option("--dist", o.dist, "operand distribution: gpumode (uniform bytes, scales {0..3}) or "
                                   "normal (N(0,1) quantized per block)")->capture_default_str();
  app.add_option("--kernel", s.kernel, "kernel under test, or auto (see --list)")->capture_default_str();
  app.add_option("--kernel-config", s.kernel_config,
                 "pin what the kernel runs for this shape, as the report's kernel.configuration "
                 "spells it (see --list-configs); default: the kernel's own choice");
  app.add_option("--reference", s.reference, "reference, or auto (see --list)")->capture_default_str();
  app.add_option("--rtol", s.tolerance.rtol, "relative tolerance")->check(number_text())->capture_default_str();
  app.add_option("--atol", s.tolerance.atol, "absolute tolerance")->check(number_text())->capture_default_str();
  app.add_option("--verify-sample", s.verify_sample,
                 "check N random output elements instead of all (0: all; huge CPU checks are "
                 "sampled automatically)")->check(integer_text<int64_t>())->capture_default_str();
}

// Measurement (src/measure/measure.hpp).
void add_measure_options(CLI::App& app, RunOptions& o) {
  MeasureOptions& mo = o.spec.measure;
  o.mode_option = app.add_option("--mode", o.mode,
                 "timing mode: cold (L2 flushed before each launch), hot (back to back, L2 warm), "
                 "rotate (back-to-back launches over operand copies totalling >= 3x L2), graph "
                 "(the rotate batch captured in a CUDA graph and replayed)")->capture_default_str();
  app.add_flag("--no-flush", o.no_flush, "same as --mode hot");
  app.add_flag("--rotate", o.rotate, "same as --mode rotate");
  app.add_flag("--graph", o.graph, "same as --mode graph");
  o.warmup_option = app.add_option("--warmup", mo.warmup,
                 "warm-up runs before timing, at least (default 3 on a GPU, 1 on the host backend)")
      ->check(integer_text<int>());
  app.add_option("--warmup-time", mo.warmup_s, "and at least this many seconds of warm-up")
      ->check(number_text())
      ->capture_default_str();
  o.iters_option = app.add_option("--iters", mo.iters,
                 "N timed samples, fewer when --max-time runs out first; 0: adaptive, until the "
                 "noise target (default: adaptive on a GPU; on the host backend 30, the least "
                 "compare judges, or --max-time 1 s, whichever first)")->check(integer_text<int>());
  app.add_option("--noise-target", o.noise_target_pct,
                 "adaptive: stop when the median's relative standard error is under this percent")
      ->check(number_text())
      ->capture_default_str();
  app.add_option("--min-samples", mo.sampling.min_samples, "adaptive: at least this many samples")
      ->check(integer_text<int64_t>())
      ->capture_default_str();
  app.add_option("--max-samples", mo.sampling.max_samples,
                 "stop after this many samples (dropped ones included)")
      ->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--min-time", mo.sampling.min_time_s,
                 "adaptive: sample at least this many seconds")->check(number_text())->capture_default_str();
  o.max_time_option = app.add_option("--max-time", mo.sampling.max_time_s,
                 "stop sampling after this many seconds (warm-up too; default 1 on the host backend "
                 "without --iters)")
      ->check(number_text())
      ->capture_default_str();
  app.add_option("--batch", mo.batch,
                 "launches per sample in rotate/graph modes (0: a multiple of the copy count, >= 20)")
      ->check(integer_text<int>())
      ->capture_default_str();
  app.add_option("--min-clock", mo.min_clock_fraction,
                 "drop samples taken while the SM clock was under this fraction of its default")
      ->check(number_text())
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s,
                 "end the run with exit 3 when it has not finished after this many seconds (0: "
                 "never); a kernel that hangs cannot hold the verdict")
      ->check(number_text())
      ->capture_default_str();
}

// Output, device, peers, exact checks, plugins, --list.
void add_output_options(CLI::App& app, RunOptions& o) {
  CaseSpec& s = o.spec;
  auto* json = app.add_option("--json", o.json_path, "write the native JSON report to this path");
  o.format_option = app.add_option("--format", o.format,
                 "format of --output: json (native report), gbench (google-benchmark JSON), "
                 "bencher (Bencher Metric Format), csv, md (Markdown table), text (the terminal summary)")->capture_default_str();
  auto* output = app.add_option("--output", o.output,
                 "write the report in --format to this path ('-': stdout, the summary then goes to stderr)");
  auto* samples = app.add_flag("--samples", o.keep_samples, "keep the raw timing samples in the report");
  auto* save = app.add_option("--save-tensors", s.save_tensors_dir,
                 "write the problem as .npy files (a, b, sfa, sfb, blocked scales, c, ref) to DIR");
  app.add_option("--device", o.device, "CUDA device ordinal")->check(integer_text<int>())->capture_default_str();
  app.add_option("--peers", s.peers, "peers timed beside the kernel: all, or names (see --list)")
      ->delimiter(',');
  app.add_option("--verify-exact", s.verify_exact,
                 "also check N sampled elements of kernel and reference against the exact CPU "
                 "reference")->check(integer_text<int64_t>())->capture_default_str();
  app.add_flag("--check-every-call", s.check_every_call,
               "check every timed call in full against the reference, right after its sample "
               "(GPU MODE's leaderboard rule); the first wrong call ends the case");
  app.add_flag("--audit-streams", s.audit_streams,
               "also record every stream's kernels and copies with CUPTI while the kernel is timed: "
               "work on another stream outside the timed windows fails the case (GPU only; costs "
               "time per sample, see docs/cli.md)");
  o.secret_option = app.add_option("--secret-seed", o.secret_value,
                 "the verdict's secret (the timed calls' operands, C fills and checked elements), "
                 "to reproduce a failure from its report; makes them predictable to a kernel")
      ->check(integer_text<uint64_t>());
  app.add_option("--kernel-lib", o.kernel_libs,
                 "load kernels from a plugin library (include/nvfp4bench/plugin.h, docs/plugins.md); "
                 "repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->expected(1);
  app.add_option("--kernel-py", o.kernel_pys,
                 "load a kernel written in Python, FILE.py[:FUNCTION] (default custom_kernel; a "
                 "GPU MODE submission, docs/python.md), as py:STEM; repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->expected(1);
  auto* isolate = app.add_flag_callback("--isolate", [&o] { o.isolate = 1; },
                 "run the case in a child process, so that a kernel ending the process in a way "
                 "no guard can catch (_exit, SIGKILL) still gets a verdict and a report (default "
                 "with --kernel-lib or --kernel-py)");
  app.add_flag_callback("--no-isolate", [&o] { o.isolate = 0; },
                 "run the case in this process, also with --kernel-lib or --kernel-py")
      ->excludes(isolate);
  auto* list = app.add_flag("--list", o.list, "list kernels, references and peers with their availability here");
  auto* list_configs = app.add_flag("--list-configs", o.list_configs,
                 "list the configurations --kernel can run for this shape (--kernel-config values), "
                 "one a line");
  // Combinations that would silently do nothing: refused with one line instead.
  for (CLI::Option* l : {list, list_configs}) l->excludes(json)->excludes(output)->excludes(save)->excludes(samples);
  list->excludes(list_configs);
}

}  // namespace

void add_run_options(CLI::App& app, RunOptions& o) {
  // A single-valued option given twice is refused, not "the last one wins": one of the two
  // values would be silently lost (the lists --peers, --kernel-lib and --kernel-py repeat).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  add_problem_options(app, o);
  add_measure_options(app, o);
  add_output_options(app, o);
}

namespace {

// An output folder that does not exist yet is created later: its nearest existing ancestor
// must then be a writable folder.
void check_output_dir(const char* option, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) throw usage_error(fmt::format("{} {}: not a usable path ({})", option, dir, ec.message()));
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec))
      throw usage_error(fmt::format("{} {}: exists and is not a folder", option, dir));
  } else {
    while (!p.empty() && p != p.root_path() && !fs::exists(p, ec)) p = p.parent_path();
    if (!fs::is_directory(p, ec))
      throw usage_error(fmt::format("{} {}: {} is not a folder", option, dir, p.string()));
  }
  if (access(p.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("{} {}: folder {} is not writable", option, dir, p.string()));
}

void check_output_path(const char* flag, const std::string& path) { check_output_file(flag, path); }

// The timing mode from --mode and its shorthands; two different requests are an error.
void validate_measure_options(RunOptions& o) {
  MeasureOptions& m = o.spec.measure;
  std::vector<std::pair<std::string, std::string>> asked;  // (flag, mode)
  if (o.mode_option && o.mode_option->count() > 0) asked.push_back({"--mode " + o.mode, o.mode});
  if (o.no_flush) asked.push_back({"--no-flush", "hot"});
  if (o.rotate) asked.push_back({"--rotate", "rotate"});
  if (o.graph) asked.push_back({"--graph", "graph"});
  for (const auto& a : asked)
    if (a.second != asked.front().second)
      throw usage_error(fmt::format("{} and {}: conflicting timing modes; give one", asked.front().first,
                                    a.first));
  const std::string mode = asked.empty() ? o.mode : asked.front().second;
  const auto parsed = parse_mode(mode);
  if (!parsed)
    throw usage_error(fmt::format("--mode '{}': unknown; expected cold, hot, rotate or graph", mode));
  m.mode = *parsed;
  if (m.warmup < 0) throw usage_error(fmt::format("--warmup {}: must be >= 0", m.warmup));
  if (!(m.warmup_s >= 0)) throw usage_error(fmt::format("--warmup-time {}: must be >= 0", m.warmup_s));
  if (m.iters < 0) throw usage_error(fmt::format("--iters {}: must be >= 0 (0: adaptive)", m.iters));
  if (!(o.noise_target_pct > 0))
    throw usage_error(fmt::format("--noise-target {}: must be a percentage > 0", o.noise_target_pct));
  m.sampling.target_rse = o.noise_target_pct / 100.0;
  SamplingRule& r = m.sampling;
  if (r.min_samples < 1) throw usage_error(fmt::format("--min-samples {}: must be >= 1", r.min_samples));
  if (r.max_samples < r.min_samples)
    throw usage_error(fmt::format("--max-samples {}: must be >= --min-samples ({})", r.max_samples,
                                  r.min_samples));
  if (!(r.min_time_s >= 0)) throw usage_error(fmt::format("--min-time {}: must be >= 0", r.min_time_s));
  if (!(r.max_time_s > 0)) throw usage_error(fmt::format("--max-time {}: must be > 0", r.max_time_s));
  if (r.min_time_s > r.max_time_s)
    throw usage_error(fmt::format("--min-time {}: must be <= --max-time ({})", r.min_time_s, r.max_time_s));
  if (m.batch < 0) throw usage_error(fmt::format("--batch {}: must be >= 0 (0: automatic)", m.batch));
  if (!(m.min_clock_fraction >= 0 && m.min_clock_fraction <= 1))
    throw usage_error(fmt::format("--min-clock {}: must be a fraction in [0, 1]", m.min_clock_fraction));
}

}  // namespace

void validate_options(RunOptions& o) {
  auto d = parse_dist(o.dist);
  if (!d) throw usage_error(fmt::format("--dist '{}': unknown; expected gpumode or normal", o.dist));
  o.spec.problem.dist = *d;
  const auto& t = o.spec.tolerance;
  if (!(t.rtol >= 0) || !std::isfinite(t.rtol))
    throw usage_error(fmt::format("--rtol {}: must be a finite number >= 0", t.rtol));
  if (!(t.atol >= 0) || !std::isfinite(t.atol))
    throw usage_error(fmt::format("--atol {}: must be a finite number >= 0", t.atol));
  if (o.spec.verify_exact < 0)
    throw usage_error(fmt::format("--verify-exact {}: must be >= 0", o.spec.verify_exact));
  o.spec.peers = resolve_peer_names(o.spec.peers);
  if (o.secret_option && o.secret_option->count() > 0) o.spec.secret_seed = o.secret_value;
  if (o.spec.verify_sample < 0)
    throw usage_error(fmt::format("--verify-sample {}: must be >= 0", o.spec.verify_sample));
  validate_measure_options(o);
  if (o.device < 0) throw usage_error(fmt::format("--device {}: must be >= 0", o.device));
  if (!(o.timeout_s >= 0) || !std::isfinite(o.timeout_s))
    throw usage_error(fmt::format("--timeout {}: must be a finite number of seconds >= 0 (0: no limit)", o.timeout_s));
  // Output paths are checked before anything runs, so no measurement is lost to a typo.
  check_output_path("--json", o.json_path);
  if (o.output != "-") check_output_path("--output", o.output);
  {
    std::vector<NamedPath> inputs;
    for (const auto& lib : o.kernel_libs) inputs.push_back({"--kernel-lib", lib});
    // FILE.py[:FUNCTION]: the spec as given and without its last ":..." (whichever is the file).
    for (const auto& py : o.kernel_pys) {
      inputs.push_back({"--kernel-py", py});
      if (const size_t colon = py.rfind(':'); colon != std::string::npos && colon > 0)
        inputs.push_back({"--kernel-py", py.substr(0, colon)});
    }
    std::vector<NamedPath> outputs = {{"--json", o.json_path}, {"--output", o.output}};
    if (!o.spec.save_tensors_dir.empty())
      for (const auto& f : saved_tensor_files())
        outputs.push_back({"--save-tensors", o.spec.save_tensors_dir + "/" + f});
    check_outputs_distinct(outputs, inputs);
  }
  (void)writer_for("--format", o.format);
  if (o.format_option && o.format_option->count() > 0 && o.output.empty())
    throw usage_error(fmt::format("--format {}: needs --output PATH (or --output - for stdout)", o.format));
  if (o.format_option && o.format_option->count() == 0 && !o.output.empty() && o.output != "-") {
    // A file named for another format would get the default JSON: say so rather than write it.
    const std::string ext = std::filesystem::path(o.output).extension().string();
    for (const char* other : {".csv", ".md", ".txt", ".xml", ".html"})
      if (ext == other)
        throw usage_error(fmt::format("--output {}: needs --format ({}); without it the report is "
                                      "json", o.output, fmt::join(writer_formats(), ", ")));
  }
  if (o.keep_samples && o.json_path.empty() && o.output.empty())
    throw usage_error("--samples: needs a report to keep them in (--json PATH or --output PATH)");
  if (!o.spec.save_tensors_dir.empty()) check_output_dir("--save-tensors", o.spec.save_tensors_dir);
  if (!o.list) validate_shape(o.spec.problem.shape);
}

void apply_backend_defaults(RunOptions& o, const Context& ctx) {
  if (ctx.gpu()) return;
  if (o.device != 0)
    throw usage_error(fmt::format("--device {}: {}; the host backend has device 0 only", o.device,
                                  ctx.dev.no_gpu_reason.empty() ? "no CUDA device" : ctx.dev.no_gpu_reason));
  if (o.spec.audit_streams)
    throw usage_error(fmt::format("--audit-streams: {}; CUPTI audits CUDA streams, the host backend "
                                  "has none", ctx.dev.no_gpu_reason.empty() ? "no CUDA device"
                                                                           : ctx.dev.no_gpu_reason));
  // CPU runs are slow, but a report of fewer samples than compare judges would make a gate
  // that can only say "not comparable": enough samples for it, unless a second runs out first.
  if (o.iters_option && o.iters_option->count() == 0) {
    o.spec.measure.iters = int(kComparableSamples);
    if (o.max_time_option && o.max_time_option->count() == 0)
      o.spec.measure.sampling.max_time_s = std::max(kHostSamplingSeconds, o.spec.measure.sampling.min_time_s);
  }
  if (o.warmup_option && o.warmup_option->count() == 0) o.spec.measure.warmup = 1;
}

}  // namespace nvfp4
