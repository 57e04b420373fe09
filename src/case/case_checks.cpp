// The checks of one case's outputs: the reference on the host, verification (sampled, full,
// exact), and the verdict's checks of a kernel whose first call passed (docs/cli.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "kernels/reference/cpu_exact.hpp"
#include "src/case/case_parts.hpp"
#include "src/case/verdict.hpp"
#include "src/measure/floor.hpp"

namespace nvfp4 {

namespace {

// The recheck (checked_runs.hpp) in the kernel's own buffers, against the case's reference.
Recheck recheck_kernel(const CaseSpec& spec, const CasePlan& p, Context& ctx, CaseOutputs& out) {
  // The first call's C is verified and saved by now: the recheck's call writes it.
  if (ctx.gpu())
    return recheck_on_device(spec.problem, *p.kernel, *p.reference, out.dev, out.kws.get(), out.host,
                             out.kernel_out, ctx, coords_seed(out.runs.secret, kCoordsRecheck), spec.tolerance);
  return recheck_on_host(spec.problem, *p.kernel, out.host, out.first_ops, out.hws.data(), out.kernel_out,
                         coords_seed(out.runs.secret, kCoordsRecheck), spec.tolerance);
}


}  // namespace

// The CPU reference (full or at the sampled coordinates), timed once.
void run_host_reference(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  Operands hops = out.host.view();
  out.ref_out.assign(size_t(p.c_elems), kPoisonFp16);
  if (p.sample > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> idx;
    for (const Coord& c : out.coords) idx.push_back((c.batch * s.m + c.i) * s.n + c.j);
    const std::vector<uint16_t> vals = exact_at(s, hops, idx);
    for (size_t t = 0; t < out.coords.size(); ++t) {
      const Coord& c = out.coords[t];
      out.ref_out[size_t((c.batch * s.m + c.i) * s.n + c.j)] = vals[t];
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    r.notes.push_back(fmt::format("cpu reference: {} sampled elements in {:.3f} s",
                                  out.coords.size(), us * 1e-6));
    return;
  }
  hops.c = out.ref_out.data();
  MeasureOptions once;  // the CPU reference is slow: one untimed-warm-up-free sample
  once.warmup = 0;
  once.warmup_s = 0;
  once.iters = 1;
  Measurement m = measure_host([&] { p.reference->run(s, hops, nullptr, nullptr); }, once);
  r.reference_timing = make_timing(p.reference->name(), "reference", std::move(m), s, r.bytes);
}

// Kernel against reference, sampled or full; sets the disposition. False when the reference
// left outputs unwritten: an error of the reference, not the kernel (r says so).
bool verify_against_reference(const CaseSpec& spec, const CasePlan& p, const CaseOutputs& out,
                              CaseResult& r) {
  const Shape& s = spec.problem.shape;
  if (p.sample > 0) {
    Verifier v(spec.tolerance, "sampled");
    for (const Coord& c : out.coords) {
      const int64_t idx = (c.batch * s.m + c.i) * s.n + c.j;
      v.check(c, out.kernel_out[size_t(idx)], out.ref_out[size_t(idx)]);
    }
    r.verification = v.result();
  } else {
    const int64_t ref_unwritten = std::count(out.ref_out.begin(), out.ref_out.end(), kPoisonFp16);
    if (ref_unwritten > 0) {
      r.disposition = Disposition::Error;
      r.message = fmt::format("reference '{}' left {} of {} outputs unwritten", r.reference,
                              ref_unwritten, p.c_elems);
      return false;
    }
    r.verification = verify_full(s, out.kernel_out.data(), out.ref_out.data(), spec.tolerance);
  }
  const VerifyResult& v = *r.verification;
  if (v.passed()) {
    r.disposition = Disposition::Passed;
  } else {
    r.disposition = Disposition::Incorrect;
    r.message = fmt::format("{} of {} checked elements mismatch ({} unwritten)", v.mismatches,
                            v.checked, v.unwritten);
  }
  return true;
}

// --verify-exact: both kernel and reference against the exact CPU value at sampled points,
// so a wrong reference is caught too.
void verify_exact(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  const auto pts =
      sample_coords(s, std::min(spec.verify_exact, p.c_elems), spec.problem.seed ^ 0xe8ac7ull);
  std::vector<int64_t> idx;
  for (const Coord& c : pts) idx.push_back((c.batch * s.m + c.i) * s.n + c.j);
  const std::vector<uint16_t> exact = exact_at(s, out.host.view(), idx);
  Verifier vk(spec.tolerance, "sampled"), vr(spec.tolerance, "sampled");
  for (size_t t = 0; t < pts.size(); ++t) {
    const Coord& c = pts[t];
    const size_t idx = size_t((c.batch * s.m + c.i) * s.n + c.j);
    vk.check(c, out.kernel_out[idx], exact[t]);
    vr.check(c, out.ref_out[idx] == kPoisonFp16 && p.sample > 0 ? exact[t] : out.ref_out[idx],
             exact[t]);
  }
  r.exact_kernel = vk.result();
  r.exact_reference = vr.result();
  if (!r.exact_reference->passed()) {
    r.disposition = Disposition::Error;
    r.message = fmt::format("reference '{}' disagrees with the exact CPU reference at {} of {} "
                            "sampled elements", r.reference, r.exact_reference->mismatches,
                            r.exact_reference->checked);
  } else if (!r.exact_kernel->passed() && r.disposition == Disposition::Passed) {
    r.disposition = Disposition::Incorrect;
    r.message = fmt::format("kernel disagrees with the exact CPU reference at {} of {} sampled "
                            "elements", r.exact_kernel->mismatches, r.exact_kernel->checked);
  }
}


// The verdict's checks (verdict.hpp) for a kernel whose first call passed: what the timed calls
// wrote, the recheck, the floor; a failure makes the case incorrect with its line.
void judge_verdict(const CaseSpec& spec, const CasePlan& p, Context& ctx, CaseOutputs& out,
                   CaseResult& r) {
  VerdictChecks v;
  if (!out.stop_failure.empty()) {
    // The timing stopped at a wrong call (--check-every-call, the only VerdictStop): nothing
    // else to look at, and no hold's record to report.
    v.timed.failure = out.stop_failure;
    v.timed.done = true;
    v.timed.every_call = spec.check_every_call;
    v.timed.secret_seed = out.runs.secret;
    r.verdict = std::move(v);
    apply_verdict(r);
    return;
  }
  TimedRuns kruns = out.runs;
  kruns.reference = p.reference.get();
  if (out.timed)
    v.timed = out.timed->judge(ctx.gpu() ? expected_on_device(kruns, out.dev, ctx) : expected_on_host(kruns),
                               spec.tolerance);
  if (r.kernel_timing && r.kernel_timing->ran) {
    const Measurement& m = r.kernel_timing->measurement;
    IsolationCheck& iso = v.isolation;
    iso.done = m.holds > 0;
    iso.holds = m.holds;
    iso.holds_timed_out = m.holds_timed_out;
    iso.max_start_skew_us = m.max_start_skew_us;
    iso.max_gap_us = m.max_gap_us;
    iso.audited = m.audited;
    iso.audit_records = m.audit_records;
    iso.audit_windows = m.audit_windows;
    iso.audit_outside = m.audit_outside;
    iso.failure = m.isolation_failure;
  }
  v.recheck = recheck_kernel(spec, p, ctx, out);
  if (r.kernel_timing && r.kernel_timing->ran) {
    const Measurement& m = r.kernel_timing->measurement;
    // Operands were evicted from L2 before the timed calls in every device mode but hot.
    v.floor = floor_for(spec.problem.shape, ctx.dev, ctx.gpu() && m.mode != MeasureMode::Hot);
    v.floor_failure = below_floor(m.stats.median, v.floor);
  }
  r.verdict = std::move(v);
  apply_verdict(r);
}

}  // namespace nvfp4
