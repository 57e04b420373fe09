#include "src/app/commands.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <type_traits>

#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"
#include "src/registry/registry.hpp"
#include "src/report/json_report.hpp"
#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

std::string time_line(const TimingResult& t) {
  const Measurement& m = t.measurement;
  const Stats& s = m.stats;
  // The median's noise means something from 3 samples on (2 give no spread to speak of).
  const std::string noise = s.count >= 3 ? fmt::format(" ±{:.2f}%", 100.0 * s.rse_median()) : "";
  std::string line = fmt::format("{:>12} median{} ({}, {}, {}), {:.4g} TFLOP/s, {:.4g} GB/s",
                                 human_duration(s.median), noise, sample_count(s.count), m.mode,
                                 m.stop_reason, t.tflops, t.gbps);
  if (t.sol_fraction) line += fmt::format(", {:.1f}% of SOL", 100.0 * *t.sol_fraction);
  if (m.clock.read) line += fmt::format(", SM {:.0f} MHz", m.clock.median_mhz);
  if (m.clock.dropped_low_clock) line += fmt::format(", {} dropped (low clock)", m.clock.dropped_low_clock);
  return line;
}

void print_summary(const CaseResult& r, const Context& ctx, std::FILE* out) {
  const Shape& s = r.problem.shape;
  std::fprintf(out, "problem   %lldx%lldx%lld L=%lld  dist=%s seed=%llu\n", (long long)s.m,
                 (long long)s.n, (long long)s.k, (long long)s.l, dist_name(r.problem.dist),
                 (unsigned long long)r.problem.seed);
  if (ctx.gpu())
    std::fprintf(out, "device    %s (compute capability %s, %d SMs)\n", ctx.dev.name.c_str(),
                   ctx.dev.cc_string().c_str(), ctx.dev.sm_count);
  if (r.kernel_timing)
    std::fprintf(out, "kernel    %-14s %s\n", r.kernel.c_str(), time_line(*r.kernel_timing).c_str());
  if (r.kernel_timing && !r.kernel_configuration.empty())
    std::fprintf(out, "config    %s\n", r.kernel_configuration.c_str());
  if (r.reference_timing)
    std::fprintf(out, "reference %-14s %s\n", r.reference.c_str(), time_line(*r.reference_timing).c_str());
  else
    std::fprintf(out, "reference %s\n", r.reference.c_str());
  for (const auto& p : r.peers) {
    if (p.ran)
      std::fprintf(out, "peer      %-14s %s, kernel %.2fx faster%s\n", p.name.c_str(),
                   time_line(p).c_str(), p.kernel_speedup, p.same_numerics ? "" : " [different numerics]");
    else
      std::fprintf(out, "peer      %-14s not run: %s\n", p.name.c_str(), p.reason.c_str());
  }
  if (r.speed_of_light && r.speed_of_light->known) {
    const SolResult& sol = *r.speed_of_light;
    std::fprintf(out, "sol       %.2f us (%s bound on %s: %.3g TB/s, %.4g TFLOP/s %s)", sol.sol_s * 1e6,
                 sol.bound(), sol.gpu.c_str(), sol.bandwidth_tbs, sol.tflops, sol.compute_format.c_str());
    if (r.kernel_timing && r.kernel_timing->sol_fraction)
      std::fprintf(out, ", kernel at %.1f%%", 100.0 * *r.kernel_timing->sol_fraction);
    std::fprintf(out, "\n");
  }
  for (const auto& n : r.notes) std::fprintf(out, "note      %s\n", n.c_str());
  if (r.exact_kernel)
    std::fprintf(out, "exact     kernel %s, reference %s (%lld sampled elements vs the exact CPU reference)\n",
                 r.exact_kernel->passed() ? "agrees" : "DISAGREES",
                 r.exact_reference->passed() ? "agrees" : "DISAGREES", (long long)r.exact_kernel->checked);
  if (r.verification) {
    const VerifyResult& v = *r.verification;
    std::fprintf(out, "verify    %s (%s, %lld elements, %lld mismatches, %lld unwritten, max abs err %.3g, "
                   "max rel err %.3g)\n",
                   v.passed() ? "PASSED" : "FAILED", v.mode.c_str(), (long long)v.checked,
                   (long long)v.mismatches, (long long)v.unwritten, v.max_abs_err, v.max_rel_err);
    for (const auto& m : v.first)
      std::fprintf(out, "          at l=%lld i=%lld j=%lld: got %g, expected %g%s\n", (long long)m.at.batch,
                     (long long)m.at.i, (long long)m.at.j, m.got, m.expected,
                     m.unwritten ? " (never written)" : "");
  }
  if (r.disposition != Disposition::Passed)
    std::fprintf(out, "result    %s: %s\n", disposition_name(r.disposition), r.message.c_str());
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
      // The no-GPU reason is said once, above; not again under every device implementation.
      if (!a.ok && !dev.has_gpu && a.reason.rfind("no CUDA device", 0) == 0) a.reason = "needs a CUDA device";
      if (!a.ok) std::printf("  %-16s %-13s why: %s\n", "", "", a.reason.c_str());
    }
  }
  return kExitPass;
}

int run_command(RunOptions& o, int argc, char** argv) {
  validate_options(o);
  for (const auto& lib : o.kernel_libs) (void)load_kernel_library(lib);  // no-op when loaded
  for (const auto& py : o.kernel_pys) (void)load_python_kernel(py);      // likewise
  Context ctx = Context::create(o.device);
  if (o.list) return list_command(ctx.dev);
  if (!ctx.gpu()) {
    // Said first: every number below comes from the CPU.
    std::fprintf(o.output == "-" ? stderr : stdout,
                 "nvfp4bench: no CUDA device (%s): running on the host backend\n",
                 ctx.dev.no_gpu_reason.c_str());
  }
  apply_backend_defaults(o, ctx);  // CPU runs are slow: fewer samples unless asked
  // With --output - the report owns stdout; the summary moves to stderr.
  std::FILE* human = o.output == "-" ? stderr : stdout;
  const auto write_reports = [&](const CaseResult& r) {
    if (o.json_path.empty() && o.output.empty()) return;
    RunInfo info = RunInfo::collect(argc, argv, ctx.dev, o.spec.measure);
    info.seed = o.spec.problem.seed;
    info.tolerance = o.spec.tolerance;
    info.clock_source = ctx.clock_source();
    info.clock_note = ctx.clock_note;
    if (!o.json_path.empty()) {
      write_text_file_atomic(o.json_path, make_json_writer()->render(info, {r}, o.keep_samples));
      std::fprintf(human, "report    %s\n", o.json_path.c_str());
    }
    if (!o.output.empty()) {
      const std::string text = make_writer(o.format)->render(info, {r}, o.keep_samples);
      if (o.output == "-") {
        std::fputs(text.c_str(), stdout);
      } else {
        write_text_file_atomic(o.output, text);
        std::fprintf(human, "report    %s (%s)\n", o.output.c_str(), o.format.c_str());
      }
    }
  };
  const auto as_failed = [](CaseResult& r, Disposition d, const std::string& why) {
    r.disposition = d;
    r.message = why;
    r.kernel_timing.reset();
    r.reference_timing.reset();
    r.verification.reset();
  };
  CaseResult r;
  // A kernel that ends the process (exit, or the watchdog's --timeout outside a guarded call)
  // still leaves the report: the live case on the main thread, else what was known before it
  // started (the watchdog's thread must not read a case the main thread may be changing).
  CaseResult before;
  before.problem = o.spec.problem;
  before.kernel = before.kernel_asked = o.spec.kernel;
  before.reference = o.spec.reference;
  before.tolerance = o.spec.tolerance;
  guard::set_last_words([&](const std::string& why, bool live) {
    CaseResult last = live ? r : before;
    as_failed(last, Disposition::Error, why);
    write_reports(last);
  }, fmt::format("the run of kernel '{}'", o.spec.kernel));
  std::optional<Error> failed;  // a failure of the case itself: still reported, then rethrown
  try {
    run_case_into(o.spec, ctx, r);
  } catch (const Error& e) {
    as_failed(r, e.exit_code() == kExitBadInput ? Disposition::NotSupported : Disposition::Error,
              e.what());
    failed = e;
  }
  guard::set_last_words({});
  if (!failed) print_summary(r, ctx, human);
  write_reports(r);
  if (failed) throw *failed;
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
  // one line per subcommand: subs.push_back(add_NAME_command(app));
  subs.push_back(add_compare_command(app));
  subs.push_back(add_sweep_command(app));
  subs.push_back(add_merge_command(app));
  return subs;
}

int dispatch_subcommand(Subcommands& subs, int argc, char** argv) {
  for (auto& s : subs)
    if (s.app->parsed()) return s.run(argc, argv);
  return -1;
}

}  // namespace nvfp4
