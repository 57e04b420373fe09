#include "src/case/run_case.hpp"
#include "src/case/save_tensors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "src/core/error.hpp"
#include "src/core/host_memory.hpp"
#include "src/core/files.hpp"
#include "src/case/case_parts.hpp"
#include "src/case/checked_runs.hpp"
#include "src/case/verdict.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "src/measure/floor.hpp"
#include "src/measure/sol.hpp"
#include "src/measure/stream_hold.hpp"
#include "src/device/cuda_check.hpp"
#include "src/report/npy.hpp"
#include "src/registry/registry.hpp"
#include "src/registry/resolve.hpp"

namespace nvfp4 {

Context Context::create(int device_ordinal) {
  Context c;
  c.dev = query_device(device_ordinal);
  if (c.dev.has_gpu) {
    NVFP4_CUDA_CHECK(cudaSetDevice(device_ordinal));
    c.stream = std::make_unique<Stream>();
    c.flusher = std::make_unique<L2Flusher>(c.dev.l2_bytes, device_ordinal);
    c.clock = make_clock_reader(c.dev, &c.clock_note);
    c.hold = std::make_unique<StreamHold>(device_ordinal);
  } else {
    c.clock_note = "host backend: no SM clock";
  }
  return c;
}

DeviceTimer Context::timer() const {
  DeviceTimer t;
  t.stream = stream ? stream->get() : nullptr;
  t.flusher = flusher.get();
  t.clock = clock.get();
  t.default_clock_mhz = dev.clock_khz / 1000.0;
  t.l2_bytes = dev.l2_bytes;
  t.hold = hold.get();
  return t;
}

namespace {

// Times one peer beside the kernel; a peer that cannot run here (or fails) is recorded with
// the reason and the case goes on.
TimingResult run_peer(const std::string& name, const TimedRuns& runs, DeviceTensors& dev,
                      Context& ctx, const MeasureOptions& mo, const TensorBytes& bytes,
                      std::vector<std::string>& notes) {
  const Shape& s = runs.problem.shape;
  TimingResult t;
  t.name = name;
  t.role = "peer";
  auto g = make_gemm(name, Role::Peer);
  t.same_numerics = g->same_numerics();
  const Availability a = g->availability(ctx.dev);
  if (!a.ok) {
    t.reason = a.reason;
    return t;
  }
  if (const std::string se = g->shape_error(s); !se.empty()) {
    t.reason = se;
    return t;
  }
  try {
    const int64_t c_elems = s.l * s.m * s.n;
    DeviceBuffer c(size_t(c_elems) * 2), ws(g->workspace_bytes(s));
    Operands ops = dev.view();
    ops.c = c.get<uint16_t>();
    std::vector<uint16_t> out(static_cast<size_t>(c_elems));
    run_checked_on_device(*g, s, ops, ws.get(), ctx, out);
    if (const auto unwritten = std::count(out.begin(), out.end(), kPoisonFp16); unwritten > 0)
      notes.push_back(fmt::format("peer {} left {} outputs unwritten", name, unwritten));
    // Peers are timed as the kernel is, fresh NVFP4 operands in every copy before each run (what
    // a peer prepared from them in prepare(), e.g. converted FP8 operands, is its own).
    auto m = time_on_device(*g, dev, ops, ws.get(), mo, ctx, runs);
    return make_timing(name, "peer", std::move(m), s, bytes, g->same_numerics());
  } catch (const Error& e) {
    t.reason = std::string("failed: ") + e.what();
    return t;
  }
}

}  // namespace

void apply_speed_of_light(CaseResult& r, const DeviceInfo& dev) {
  if (!dev.has_gpu) return;
  const SolResult sol = speed_of_light_for(r.problem.shape, dev, Numerics::FP4);
  r.speed_of_light = sol;
  if (!sol.known) return;
  const std::string basis = fmt::format("{}, {} bound ({})", sol.gpu, sol.bound(), sol.compute_format);
  for (auto* t : {r.kernel_timing ? &*r.kernel_timing : nullptr,
                  r.reference_timing ? &*r.reference_timing : nullptr})
    if (t && t->ran) t->set_speed_of_light(sol.sol_s * 1e6, basis);
  for (auto& p : r.peers)
    if (p.ran) p.set_speed_of_light(sol.sol_s * 1e6, basis);
}

namespace {

CasePlan plan_case(const CaseSpec& spec, Context& ctx, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  CasePlan p;
  p.peer_names = resolve_peer_names(spec.peers);
  p.kernel = resolve("--kernel", spec.kernel, Role::Kernel, s, ctx.dev);
  pin_configuration(*p.kernel, spec.kernel_config, s);
  p.reference = resolve("--reference", spec.reference, Role::Reference, s, ctx.dev);
  r.kernel = p.kernel->name();
  r.kernel_asked = spec.kernel;
  r.kernel_description = p.kernel->description();
  r.kernel_configuration = p.kernel->configuration(s);
  r.reference = p.reference->name();
  r.reference_description = p.reference->description();
  p.c_elems = s.l * s.m * s.n;

  // Sampled or full: a full CPU check of a huge problem would take minutes.
  p.sample = spec.verify_sample;
  if (p.sample == 0 && p.reference->space() == Space::Host &&
      double(s.m) * double(s.n) * double(s.k) * double(s.l) > kAutoSampleMacs) {
    p.sample = kAutoSampleCount;
    r.notes.push_back(fmt::format("full CPU check too large: sampled {} elements", p.sample));
  }
  p.sample = std::min(p.sample, p.c_elems);
  p.need_host_inputs = !ctx.gpu() || p.reference->space() == Space::Host ||
                       !spec.save_tensors_dir.empty() || spec.verify_exact > 0;
  return p;
}

// Refused up front, with the sizes: an overcommitted allocation would not fail cleanly.
void require_memory(const Shape& s, const CasePlan& p, const TensorBytes& bytes, const Context& ctx) {
  const std::string shape_text = fmt::format("{}x{}x{} L={}", s.m, s.n, s.k, s.l);
  require_host_memory((p.need_host_inputs || !ctx.gpu() ? bytes.total() : 0) + 2 * bytes.c +
                          (ctx.gpu() ? 0 : int64_t(p.kernel->workspace_bytes(s))),
                      shape_text);
  if (!ctx.gpu()) return;
  size_t free_bytes = 0, total_bytes = 0;
  NVFP4_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int64_t need = bytes.total() + (p.reference->space() == Space::Device ? bytes.c : 0) +
                       int64_t(p.kernel->workspace_bytes(s)) + int64_t(p.reference->workspace_bytes(s));
  if (need > int64_t(free_bytes))
    throw runtime_error(fmt::format("out of device memory: {} needs {} on the GPU, {} free of {}",
                                    shape_text, byte_text(double(need)), byte_text(double(free_bytes)),
                                    byte_text(double(total_bytes))));
}

CaseOutputs allocate_outputs(const CaseSpec& spec, const CasePlan& p, const Context& ctx) {
  const Shape& s = spec.problem.shape;
  CaseOutputs out;
  if (p.need_host_inputs || !ctx.gpu()) out.host.allocate(s);
  out.kernel_out.resize(static_cast<size_t>(p.c_elems));
  out.runs.problem = spec.problem;
  out.runs.secret = spec.secret_seed ? *spec.secret_seed : secret_from_os();
  // --verify-sample's elements: drawn from the secret, so the first call cannot be right there only.
  if (p.sample > 0) out.coords = sample_coords(s, p.sample, coords_seed(out.runs.secret, kCoordsFirstCall));
  out.runs.tol = spec.tolerance;
  return out;
}

// The device reference into its own poisoned buffer, before the kernel runs (what the kernel
// does to its inputs cannot change the expectation).
void run_device_reference(const CaseSpec& spec, Gemm& reference, const DeviceTensors& dev,
                          Context& ctx, std::vector<uint16_t>& ref_out) {
  const Shape& s = spec.problem.shape;
  const int64_t c_elems = s.l * s.m * s.n;
  DeviceBuffer ref_c(size_t(c_elems) * 2);
  Operands rops = dev.view();
  rops.c = ref_c.get<uint16_t>();
  DeviceBuffer rws(reference.workspace_bytes(s));
  ref_out.resize(size_t(c_elems));
  run_checked_on_device(reference, s, rops, rws.get(), ctx, ref_out);
}

// The device reference timed as the kernel is (when spec.time_reference).
void time_device_reference(const CaseSpec& spec, Gemm& reference, CaseOutputs& out, Context& ctx,
                           CaseResult& r) {
  if (!spec.time_reference) return;
  const Shape& s = spec.problem.shape;
  // A reference that cannot be timed this way (e.g. not capturable in a CUDA graph) loses
  // its timing, not the kernel's; a real fault resurfaces at the kernel's next call.
  try {
    DeviceBuffer rws(reference.workspace_bytes(s));
    TimedRuns runs = out.runs;
    runs.reference = nullptr;
    auto m = time_on_device(reference, out.dev, out.dev.view(), rws.get(), spec.measure, ctx, runs);
    r.reference_timing = make_timing(reference.name(), "reference", std::move(m), s, r.bytes);
  } catch (const Error& e) {
    r.notes.push_back(fmt::format("reference not timed: {}", e.what()));
  }
}

void note_dropped_clock_samples(CaseResult& r) {
  for (const auto* t : {&r.kernel_timing, &r.reference_timing}) {
    if (!*t || (*t)->measurement.clock.dropped_low_clock == 0) continue;
    const Measurement& tm = (*t)->measurement;
    r.notes.push_back(fmt::format("{} timing: {} of {} samples dropped, SM clock under {:.0f} MHz",
                                  (*t)->name, tm.clock.dropped_low_clock, tm.attempts,
                                  tm.clock.policy.threshold_mhz()));
  }
}

// The GPU backend's first calls: inputs generated on the device, a device reference run, then
// the kernel, each into its own poisoned C.
void first_calls_on_device(const CaseSpec& spec, const CasePlan& p, Context& ctx, CaseOutputs& out) {
  const Shape& s = spec.problem.shape;
  cudaStream_t st = ctx.stream->get();
  DeviceTensors& dev = out.dev;
  dev.allocate(s);
  generate_device(spec.problem, dev, st);
  ctx.stream->sync();
  if (p.need_host_inputs) copy_inputs_to_host(dev, out.host);

  const Operands kops = dev.view();
  out.kws = DeviceBuffer(p.kernel->workspace_bytes(s));
  DeviceBuffer& kws = out.kws;
  if (p.reference->space() == Space::Device) run_device_reference(spec, *p.reference, dev, ctx, out.ref_out);
  run_checked_on_device(*p.kernel, s, kops, kws.get(), ctx, out.kernel_out);
}

// The GPU backend's timings: a device reference, the kernel (the verdict's timed runs), then the
// peers.
void time_on_device_all(const CaseSpec& spec, const CasePlan& p, Context& ctx, CaseOutputs& out,
                        CaseResult& r) {
  const Shape& s = spec.problem.shape;
  DeviceTensors& dev = out.dev;
  const Operands kops = dev.view();
  DeviceBuffer& kws = out.kws;
  if (p.reference->space() == Space::Device) time_device_reference(spec, *p.reference, out, ctx, r);

  TimedRuns kruns = out.runs;
  kruns.reference = p.reference.get();
  kruns.every_call = spec.check_every_call;
  kruns.timed = &out.timed;
  kruns.keep_buffers = &out.timed_buffers;
  if (spec.audit_streams) {
    if (!ctx.audit) ctx.audit = StreamAudit::open();
    kruns.audit = ctx.audit.get();
  }
  try {
    auto m = time_on_device(*p.kernel, dev, kops, kws.get(), spec.measure, ctx, kruns);
    r.kernel_timing = make_timing(p.kernel->name(), "kernel", std::move(m), s, r.bytes);
  } catch (const VerdictStop& e) {
    out.stop_failure = e.what();
    ctx.stream->sync();
    return;  // judged incorrect (judge_verdict); the peers are not timed beside a wrong kernel
  }
  note_dropped_clock_samples(r);

  for (const auto& name : p.peer_names) {
    TimingResult t = run_peer(name, out.runs, dev, ctx, spec.measure, r.bytes, r.notes);
    if (t.ran && r.kernel_timing->measurement.stats.median > 0)
      t.kernel_speedup = t.measurement.stats.median / r.kernel_timing->measurement.stats.median;
    if (t.ran) {
      const ClockRecord &pc = t.measurement.clock, &kc = r.kernel_timing->measurement.clock;
      t.clock_ratio = clock_ratio(pc, kc);
      if (clocks_differ(t.clock_ratio))
        r.notes.push_back(fmt::format(
            "peer {} ran at a median SM clock of {:.0f} MHz, the kernel at {:.0f} MHz ({:.2f}x): its "
            "kernel_speedup compares the clocks as well as the code",
            t.name, pc.median_mhz, kc.median_mhz, t.clock_ratio));
    }
    r.peers.push_back(std::move(t));
  }
}

// A case's buffers, freed with the case unless the process ends after it (CaseSpec::
// last_case_in_process): then kept, reachable from a static, until exit.
struct KeptOutputs {
  std::unique_ptr<CaseOutputs> out;
  bool keep = false;
  KeptOutputs(std::unique_ptr<CaseOutputs> o, bool k) : out(std::move(o)), keep(k) {}
  KeptOutputs(const KeptOutputs&) = delete;
  KeptOutputs& operator=(const KeptOutputs&) = delete;
  ~KeptOutputs() {
    if (!keep) return;
    static std::vector<std::unique_ptr<CaseOutputs>>* const kept =
        new std::vector<std::unique_ptr<CaseOutputs>>;
    try {
      kept->push_back(std::move(out));
    } catch (...) {
      (void)out.release();  // no room to record it: still never freed
    }
  }
};

// The host backend's first calls: peers recorded as not run, inputs generated on the host, the
// CPU reference, then the kernel into its poisoned C.
void first_calls_on_host(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  for (const auto& name : p.peer_names) {
    TimingResult t;
    t.name = name;
    t.role = "peer";
    t.reason = "needs a CUDA device";
    r.peers.push_back(std::move(t));
  }
  generate_host(spec.problem, out.host);
  if (p.reference->space() == Space::Host) run_host_reference(spec, p, out, r);
  // The kernel reads a copy: what it does to its inputs cannot change what it is compared with.
  out.first_ops = out.host;
  Operands kops = out.first_ops.view();
  kops.c = out.kernel_out.data();
  poison_host(kops.c, p.c_elems);
  out.hws.resize(p.kernel->workspace_bytes(s));
  std::vector<uint8_t>& kws = out.hws;
  p.kernel->prepare(s, kops, nullptr);
  p.kernel->run(s, kops, kws.data(), nullptr);
}

// The host backend's timing of the kernel (the verdict's timed runs).
void time_on_host_kernel(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  std::vector<uint8_t>& kws = out.hws;
  out.timed_c.assign(size_t(p.c_elems), kPoisonFp16);
  TimedRuns kruns = out.runs;
  kruns.reference = p.reference.get();
  kruns.every_call = spec.check_every_call;
  kruns.timed = &out.timed;
  try {
    auto m = time_on_host(*p.kernel, kws.data(), spec.measure, out.timed_ops, out.timed_c, kruns);
    r.kernel_timing = make_timing(p.kernel->name(), "kernel", std::move(m), s, r.bytes);
  } catch (const VerdictStop& e) {
    out.stop_failure = e.what();
  }
}

}  // namespace

CaseResult run_case(const CaseSpec& spec, Context& ctx) {
  CaseResult r;
  run_case_into(spec, ctx, r);
  return r;
}

void run_case_into(const CaseSpec& spec, Context& ctx, CaseResult& r) {
  const Shape& s = spec.problem.shape;
  r.problem = spec.problem;
  r.kernel = r.kernel_asked = spec.kernel;  // until resolved
  r.reference = spec.reference;
  validate_shape(s);
  r.tolerance = spec.tolerance;
  r.bytes = TensorBytes::of(s);

  const CasePlan p = plan_case(spec, ctx, r);
  if (!ctx.gpu() && spec.measure.mode != MeasureMode::Hot && spec.measure.mode != MeasureMode::Cold)
    r.notes.push_back(fmt::format("host backend: --mode {} is timed as hot (no cache is flushed or "
                                  "rotated on the host)", mode_name(spec.measure.mode)));
  require_memory(s, p, r.bytes, ctx);
  KeptOutputs kept{std::make_unique<CaseOutputs>(allocate_outputs(spec, p, ctx)),
                   spec.last_case_in_process};
  CaseOutputs& out = *kept.out;
  // The first calls are judged before any timing, so what a later failure ends is kept.
  if (ctx.gpu())
    first_calls_on_device(spec, p, ctx, out);
  else
    first_calls_on_host(spec, p, out, r);
  if (ctx.gpu() && p.reference->space() == Space::Host) run_host_reference(spec, p, out, r);
  const bool verified = verify_against_reference(spec, p, out, r);
  if (verified) {
    if (spec.verify_exact > 0) verify_exact(spec, p, out, r);
    if (!spec.save_tensors_dir.empty())
      save_tensors(spec.save_tensors_dir, spec, out.host, out.kernel_out,
                   p.sample > 0 ? nullptr : &out.ref_out, r.kernel, r.reference);
  }
  if (ctx.gpu())
    time_on_device_all(spec, p, ctx, out, r);
  else
    time_on_host_kernel(spec, p, out, r);
  if (verified && r.disposition == Disposition::Passed) judge_verdict(spec, p, ctx, out, r);
  apply_speed_of_light(r, ctx.dev);
}

}  // namespace nvfp4
