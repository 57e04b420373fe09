// The terminal summary (what a run prints): per case the problem, the device, each timing on one
// line, the speed of light, notes, verification and, when it did not pass, why.
#include <fmt/format.h>
#include <fmt/printf.h>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

std::string time_line(const TimingResult& t) {
  const Measurement& m = t.measurement;
  const Stats& s = m.stats;
  // The median's noise means something from 3 samples on (2 give no spread to speak of).
  const std::string noise = s.count >= 3 ? fmt::format(" ±{:.2f}%", 100.0 * s.rse_median()) : "";
  std::string line = fmt::format("{:>12} median{} ({}, {}, {}), {:.4g} TFLOP/s, {:.4g} GB/s",
                                 human_duration(s.median), noise, sample_count(s.count), mode_name(m.mode),
                                 m.stop_reason, t.tflops, t.gbps);
  if (t.sol_fraction) line += fmt::format(", {:.1f}% of SOL", 100.0 * *t.sol_fraction);
  if (m.clock.read) line += fmt::format(", SM {:.0f} MHz", m.clock.median_mhz);
  if (m.clock.dropped_low_clock) line += fmt::format(", {} dropped (low clock)", m.clock.dropped_low_clock);
  return line + host_call_text(m);
}

std::string summary(const CaseResult& r, const DeviceInfo& dev) {
  std::string out;
  const Shape& s = r.problem.shape;
  out += fmt::sprintf("problem   %lldx%lldx%lld L=%lld  dist=%s seed=%llu\n", (long long)s.m,
                      (long long)s.n, (long long)s.k, (long long)s.l, dist_name(r.problem.dist),
                      (unsigned long long)r.problem.seed);
  if (dev.has_gpu)
    out += fmt::sprintf("device    %s (compute capability %s, %d SMs)\n", dev.name.c_str(),
                        dev.cc_string().c_str(), dev.sm_count);
  if (r.kernel_timing)
    out += fmt::sprintf("kernel    %-14s %s\n", r.kernel.c_str(), time_line(*r.kernel_timing).c_str());
  if (r.kernel_timing && !r.kernel_configuration.empty())
    out += fmt::sprintf("config    %s\n", r.kernel_configuration.c_str());
  if (r.reference_timing)
    out += fmt::sprintf("reference %-14s %s\n", r.reference.c_str(), time_line(*r.reference_timing).c_str());
  else
    out += fmt::sprintf("reference %s\n", r.reference.c_str());
  for (const auto& p : r.peers) {
    if (p.ran)
      out += fmt::sprintf("peer      %-14s %s, kernel %.2fx faster%s%s\n", p.name.c_str(),
                          time_line(p).c_str(), p.kernel_speedup, p.same_numerics ? "" : " [different numerics]",
                          clocks_differ(p.clock_ratio)
                              ? fmt::sprintf(" [at %.2fx the kernel's SM clock]", p.clock_ratio).c_str()
                              : "");
    else
      out += fmt::sprintf("peer      %-14s not run: %s\n", p.name.c_str(), p.reason.c_str());
  }
  if (r.speed_of_light && r.speed_of_light->known) {
    const SolResult& sol = *r.speed_of_light;
    out += fmt::sprintf("sol       %.2f us (%s bound on %s: %.3g TB/s, %.4g TFLOP/s %s)", sol.sol_s * 1e6,
                        sol.bound(), sol.gpu.c_str(), sol.bandwidth_tbs, sol.tflops, sol.compute_format.c_str());
    if (r.kernel_timing && r.kernel_timing->sol_fraction)
      out += fmt::sprintf(", kernel at %.1f%%", 100.0 * *r.kernel_timing->sol_fraction);
    out += "\n";
  }
  for (const auto& n : r.notes) out += fmt::sprintf("note      %s\n", n.c_str());
  if (r.exact_kernel)
    out += fmt::sprintf("exact     kernel %s, reference %s (%lld sampled elements vs the exact CPU reference)\n",
                        r.exact_kernel->passed() ? "agrees" : "DISAGREES",
                        r.exact_reference->passed() ? "agrees" : "DISAGREES", (long long)r.exact_kernel->checked);
  if (r.verification) {
    const VerifyResult& v = *r.verification;
    // Errors are over finite pairs: where every mismatch is unwritten, NaN or infinite, a 0
    // would read as "right", so none is given.
    const std::string errs = v.mismatches > 0 && v.max_abs_err == 0
                                 ? std::string("no finite mismatch to measure an error on")
                                 : fmt::format("max abs err {:.3g}, max rel err {:.3g}", v.max_abs_err, v.max_rel_err);
    out += fmt::sprintf("verify    %s (%s, %lld elements, %lld mismatches, %lld unwritten, %s)\n",
                        v.passed() ? "PASSED" : "FAILED", v.mode.c_str(), (long long)v.checked,
                        (long long)v.mismatches, (long long)v.unwritten, errs.c_str());
    for (const auto& m : v.first)
      out += fmt::sprintf("          at l=%lld i=%lld j=%lld: got %g, expected %g%s\n", (long long)m.at.batch,
                          (long long)m.at.i, (long long)m.at.j, m.got, m.expected,
                          m.unwritten ? " (never written)" : "");
  }
  if (const std::string v = verdict_line(r); !v.empty()) out += fmt::sprintf("checked   %s\n", v.c_str());
  if (r.disposition != Disposition::Passed)
    out += fmt::sprintf("result    %s: %s\n", disposition_name(r.disposition), r.message.c_str());
  return out;
}

class TextWriter final : public ReportWriter {
 public:
  std::string format() const override { return "text"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases, bool) const override {
    std::string out;
    for (const CaseResult& c : cases) out += summary(c, info.device);
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_text_writer() { return std::make_unique<TextWriter>(); }

}  // namespace nvfp4
