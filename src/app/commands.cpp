#include "app/commands.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "kernels/plugin/plugin_loader.hpp"
#include "report/json_report.hpp"

namespace nvfp4 {

namespace {

// CLI11 2.1 reads hex, clamps out-of-range integers and reports a bad value as "--m = 16,abc":
// every number is checked here first (decimal only, in range), naming the value.
template <class T>
CLI::Validator integer_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T v{};
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc::result_out_of_range)
          return fmt::format("'{}' is out of range ({} to {})", text, std::numeric_limits<T>::min(),
                             std::numeric_limits<T>::max());
        if (ec != std::errc() || ptr != end)
          return fmt::format("'{}' is not {}", text, std::is_signed_v<T> ? "a decimal integer"
                                                                         : "a non-negative decimal integer");
        return {};
      },
      "");
}

CLI::Validator number_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        (void)std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return fmt::format("'{}' is not a number", text);
        if (errno == ERANGE) return fmt::format("'{}' is out of range", text);
        return {};
      },
      "");
}

}  // namespace

void add_run_options(CLI::App& app, RunOptions& o) {
  CaseSpec& s = o.spec;
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // last one wins
  s.problem.shape = {128, 7168, 16384, 1};
  app.add_option("--m", s.problem.shape.m, "rows of A and C")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--n", s.problem.shape.n, "rows of B, columns of C")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--k", s.problem.shape.k, "reduction size, a multiple of 16")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--l", s.problem.shape.l, "batch count")->check(integer_text<int64_t>())->capture_default_str();
  app.add_option("--seed", s.problem.seed, "seed of the operand generator")->check(integer_text<uint64_t>())->capture_default_str();
  app.add_option("--dist", o.dist, "operand distribution: gpumode (uniform bytes, scales {0..3}) or "
                                   "normal (N(0,1) quantized per block)")->capture_default_str();
  app.add_option("--kernel", s.kernel, "kernel under test, or auto (see --list)")->capture_default_str();
  app.add_option("--reference", s.reference, "reference, or auto (see --list)")->capture_default_str();
  app.add_option("--rtol", s.tolerance.rtol, "relative tolerance")->check(number_text())->capture_default_str();
  app.add_option("--atol", s.tolerance.atol, "absolute tolerance")->check(number_text())->capture_default_str();
  app.add_option("--verify-sample", s.verify_sample,
                 "check N random output elements instead of all (0: all; huge CPU checks are "
                 "sampled automatically)")->check(integer_text<int64_t>())->capture_default_str();
  o.warmup_option = app.add_option("--warmup", s.measure.warmup,
                                   "warm-up runs before timing (default 3 on a GPU, 1 on the host backend)")->check(integer_text<int>());
  o.iters_option = app.add_option("--iters", s.measure.iters,
                 "timed samples (default 20 on a GPU, 3 on the host backend)")->check(integer_text<int>());
  app.add_flag("--no-flush", [&s](int64_t) { s.measure.flush_l2 = false; },
               "do not flush L2 before each sample (hot)");
  auto* json = app.add_option("--json", o.json_path, "write the JSON report to this path");
  auto* samples = app.add_flag("--samples", o.keep_samples, "keep the raw timing samples in the report");
  auto* save = app.add_option("--save-tensors", s.save_tensors_dir,
                 "write the problem as .npy files (a, b, sfa, sfb, blocked scales, c, ref) to DIR");
  app.add_option("--device", o.device, "CUDA device ordinal")->check(integer_text<int>())->capture_default_str();
  app.add_option("--kernel-lib", o.kernel_libs,
                 "load kernels from a plugin library (kernels/plugin/nvfp4bench_plugin.h); "
                 "repeatable")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->expected(1);
  auto* list = app.add_flag("--list", o.list, "list kernels, references and peers with their availability here");
  // Combinations that would silently do nothing: refused with one line instead.
  samples->needs(json);
  list->excludes(json)->excludes(save)->excludes(samples);
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
  if (o.spec.verify_sample < 0)
    throw usage_error(fmt::format("--verify-sample {}: must be >= 0", o.spec.verify_sample));
  if (o.spec.measure.warmup < 0)
    throw usage_error(fmt::format("--warmup {}: must be >= 0", o.spec.measure.warmup));
  if (o.spec.measure.iters < 1)
    throw usage_error(fmt::format("--iters {}: must be >= 1", o.spec.measure.iters));
  if (o.device < 0) throw usage_error(fmt::format("--device {}: must be >= 0", o.device));
  // Output paths are checked before anything runs, so no measurement is lost to a typo.
  if (!o.json_path.empty()) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(o.json_path, ec);
    const auto parent = abs.parent_path();
    if (ec || abs.filename().empty() || std::filesystem::is_directory(abs, ec))
      throw usage_error(fmt::format("--json {}: not a file path", o.json_path));
    if (!std::filesystem::is_directory(parent, ec) || access(parent.c_str(), W_OK) != 0)
      throw usage_error(fmt::format("--json {}: folder {} does not exist or is not writable",
                                    o.json_path, parent.string()));
  }
  if (!o.spec.save_tensors_dir.empty()) check_output_dir("--save-tensors", o.spec.save_tensors_dir);
  if (!o.list) validate_shape(o.spec.problem.shape);
}

namespace {

std::string time_line(const TimingResult& t) {
  const Stats& s = t.measurement.stats;
  return fmt::format("{:>12.2f} us median ({} samples, {}{}), {:.4g} TFLOP/s, {:.4g} GB/s",
                     s.median, s.count, t.measurement.timer,
                     t.measurement.l2_flushed ? ", L2 flushed" : "", t.tflops, t.gbps);
}

void print_summary(const CaseResult& r, const Context& ctx) {
  const Shape& s = r.problem.shape;
  std::printf("problem   %lldx%lldx%lld L=%lld  dist=%s seed=%llu\n", (long long)s.m,
              (long long)s.n, (long long)s.k, (long long)s.l, dist_name(r.problem.dist),
              (unsigned long long)r.problem.seed);
  if (ctx.gpu())
    std::printf("device    %s (compute capability %s, %d SMs)\n", ctx.dev.name.c_str(),
                ctx.dev.cc_string().c_str(), ctx.dev.sm_count);
  if (r.kernel_timing)
    std::printf("kernel    %-14s %s\n", r.kernel.c_str(), time_line(*r.kernel_timing).c_str());
  if (r.reference_timing)
    std::printf("reference %-14s %s\n", r.reference.c_str(), time_line(*r.reference_timing).c_str());
  else
    std::printf("reference %s\n", r.reference.c_str());
  for (const auto& p : r.peers) {
    if (p.ran)
      std::printf("peer      %-14s %s%s\n", p.name.c_str(), time_line(p).c_str(),
                  p.same_numerics ? "" : " [different numerics]");
    else
      std::printf("peer      %-14s not run: %s\n", p.name.c_str(), p.reason.c_str());
  }
  for (const auto& n : r.notes) std::printf("note      %s\n", n.c_str());
  if (r.verification) {
    const VerifyResult& v = *r.verification;
    std::printf("verify    %s (%s, %lld elements, %lld mismatches, %lld unwritten, max abs err %.3g, "
                "max rel err %.3g)\n",
                v.passed() ? "PASSED" : "FAILED", v.mode.c_str(), (long long)v.checked,
                (long long)v.mismatches, (long long)v.unwritten, v.max_abs_err, v.max_rel_err);
    for (const auto& m : v.first)
      std::printf("          at l=%lld i=%lld j=%lld: got %g, expected %g%s\n", (long long)m.at.batch,
                  (long long)m.at.i, (long long)m.at.j, m.got, m.expected,
                  m.unwritten ? " (never written)" : "");
  }
  if (r.disposition != Disposition::Passed)
    std::printf("result    %s: %s\n", disposition_name(r.disposition), r.message.c_str());
}

}  // namespace

int list_command(const DeviceInfo& dev) {
  if (dev.has_gpu)
    std::printf("device: %s (compute capability %s)\n", dev.name.c_str(), dev.cc_string().c_str());
  else
    std::printf("device: none (%s): only host implementations run\n", dev.no_gpu_reason.c_str());
  const std::pair<Role, const char*> roles[] = {
      {Role::Kernel, "kernels"}, {Role::Reference, "references"}, {Role::Peer, "peers"}};
  for (const auto& [role, title] : roles) {
    std::printf("\n%s:\n", title);
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      const auto g = e.make();
      Availability a = g->availability(dev);
      if (a.ok && !dev.has_gpu && g->space() == Space::Device) a = {false, "needs a CUDA device"};
      if (a.ok && dev.has_gpu && g->space() == Space::Host && role == Role::Kernel)
        a = {false, "a host kernel runs only on the host backend (no CUDA device)"};
      std::printf("  %-16s %-13s %s\n", g->name().c_str(), a.ok ? "available" : "unavailable",
                  g->description().c_str());
      if (!a.ok) std::printf("  %-16s %-13s why: %s\n", "", "", a.reason.c_str());
    }
  }
  return kExitPass;
}

int run_command(RunOptions& o, int argc, char** argv) {
  validate_options(o);
  for (const auto& lib : o.kernel_libs) (void)load_kernel_library(lib);  // no-op when loaded
  Context ctx = Context::create(o.device);
  if (o.list) return list_command(ctx.dev);
  if (!ctx.gpu()) {
    // Said first: every number below comes from the CPU.
    std::printf("nvfp4bench: no CUDA device (%s): running on the host backend\n",
                ctx.dev.no_gpu_reason.c_str());
    // CPU runs are slow: fewer samples unless asked.
    if (o.iters_option && o.iters_option->count() == 0) o.spec.measure.iters = 3;
    if (o.warmup_option && o.warmup_option->count() == 0) o.spec.measure.warmup = 1;
  }
  const CaseResult r = run_case(o.spec, ctx);
  print_summary(r, ctx);
  if (!o.json_path.empty()) {
    const RunInfo info = RunInfo::collect(argc, argv, ctx.dev, o.spec.measure);
    write_text_file_atomic(o.json_path, make_report(info, {r}, o.keep_samples).dump(2) + "\n");
    std::printf("report    %s\n", o.json_path.c_str());
  }
  switch (r.disposition) {
    case Disposition::Passed: return kExitPass;
    case Disposition::Incorrect: return kExitVerifyFailed;
    case Disposition::NotSupported: return kExitBadInput;
    case Disposition::Error: return kExitRuntime;
  }
  return kExitRuntime;
}

Subcommands add_subcommands(CLI::App& app) {
  Subcommands subs;
  (void)app;  // one line per subcommand: subs.push_back(add_NAME_command(app));
  return subs;
}

int dispatch_subcommand(Subcommands& subs, int argc, char** argv) {
  for (auto& s : subs)
    if (s.app->parsed()) return s.run(argc, argv);
  return -1;
}

}  // namespace nvfp4
