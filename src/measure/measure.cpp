#include "src/measure/measure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>

#include "src/core/error.hpp"
#include "src/device/graph.hpp"
#include "src/measure/stream_audit.hpp"
#include "src/measure/stream_hold.hpp"

namespace nvfp4 {

const char* mode_name(MeasureMode m) {
  switch (m) {
    case MeasureMode::Cold: return "cold";
    case MeasureMode::Hot: return "hot";
    case MeasureMode::Rotate: return "rotate";
    case MeasureMode::Graph: return "graph";
  }
  return "cold";
}

std::optional<MeasureMode> parse_mode(const std::string& s) {
  for (MeasureMode m : {MeasureMode::Cold, MeasureMode::Hot, MeasureMode::Rotate, MeasureMode::Graph})
    if (s == mode_name(m)) return m;
  return std::nullopt;
}

std::string mode_list() {
  std::string out;
  for (MeasureMode m : {MeasureMode::Cold, MeasureMode::Hot, MeasureMode::Rotate, MeasureMode::Graph})
    out += (out.empty() ? "" : ", ") + std::string(mode_name(m));
  return out;
}

L2Flusher::L2Flusher(size_t l2_bytes, int device_ordinal)
    : buf_(2 * (l2_bytes ? l2_bytes : (64u << 20))) {
  int persisting_max = 0;
  NVFP4_CUDA_CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize,
                                          device_ordinal));
  persisting_ = persisting_max > 0;
}

void L2Flusher::flush(cudaStream_t stream) {
  // Persisting lines would survive the overwrite; the device is idle here (the previous sample
  // was synchronized), so the context-wide reset cannot disturb queued work.
  if (persisting_) NVFP4_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  NVFP4_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, buf_.bytes(), stream));
}

int launches_per_sample(int requested) {
  constexpr int kDefaultLaunches = 20;  // amortizes event resolution (~0.5 us) and graph launch
  return requested > 0 ? requested : kDefaultLaunches;
}

namespace {

// clock_gettime from the tool itself, not std::chrono::steady_clock::now: that one lives in
// libstdc++, whose call to clock_gettime goes through a GOT slot its partial RELRO leaves writable,
// so a kernel could swap the clock with one store. The tool's own GOT is read-only (full RELRO,
// CMakeLists.txt), and libc reaches the vDSO through read-only data. CLOCK_MONOTONIC_RAW: not
// slewed by adjtimex (which a root kernel could slow CLOCK_MONOTONIC with, 10 %; the tool's
// seccomp filter refuses it too).
double steady_seconds() {
  timespec ts;
  if (::clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)  // never here, unless something refuses it
    throw runtime_error(fmt::format("clock_gettime(CLOCK_MONOTONIC_RAW): {}", std::strerror(errno)));
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

void sample_loop(Measurement& m, const MeasureOptions& opt, const std::function<void()>& warm,
                 const std::function<TimedSample()>& take, const ClockPolicy& policy,
                 const ClockFn& now) {
  const double w0 = now();
  int runs = 0;
  // Bounded like sampling: a warm-up count or time past --max-time stops at --max-time.
  while ((runs < opt.warmup || now() - w0 < opt.warmup_s) && now() - w0 < opt.sampling.max_time_s) {
    warm();
    ++runs;
  }
  m.warmup_runs = runs;
  m.warmup_s = now() - w0;
  m.clock.policy = policy;
  std::vector<double> host_us;
  const SampleFn one = [&]() -> std::optional<double> {
    const TimedSample t = take();
    if (t.dropped) return std::nullopt;
    if (!policy.keep(t.clock_mhz)) {
      ++m.clock.dropped_low_clock;
      return std::nullopt;
    }
    if (t.clock_mhz) m.clock_mhz.push_back(*t.clock_mhz);
    host_us.push_back(t.host_us);
    return t.us;
  };
  const double s0 = now();
  const AdaptiveSampler s = run_sampling(opt.rule(), one, now);
  m.sampling_s = now() - s0;
  m.samples_us = s.samples();
  m.attempts = s.attempts();
  m.stop_reason = stop_reason_text(s.reason());
  summarize_clocks(m.clock, m.clock_mhz);
  m.stats = summarize(m.samples_us);
  m.host_call = summarize(std::move(host_us));
}

// More launches than this in one held sample could fill the launch queue while the stream is
// held: the host would then wait for the hold's timeout. Such batches are not held.
constexpr int kMaxHeldLaunches = 64;

namespace {

// What one hold saw, into the measurement; a failure line for the first that shows work outside
// the timed stream (`what` names the run).
void note_hold(Measurement& m, const StreamHold& hold, const std::string& what) {
  ++m.holds;
  m.max_start_skew_us = std::max(m.max_start_skew_us, hold.start_skew_us());
  m.max_gap_us = std::max(m.max_gap_us, hold.max_gap_us());
  if (!m.isolation_failure.empty()) return;
  if (hold.start_skew_us() > kMaxHoldStartSkewUs)
    m.isolation_failure = fmt::format(
        "work outside the timed stream: another kernel still held SMs when {} was held (the hold's "
        "CTAs started {:.0f} us apart, more than {:.0f})",
        what, hold.start_skew_us(), kMaxHoldStartSkewUs);
  else if (hold.max_gap_us() > kMaxHoldGapUs)
    m.isolation_failure = fmt::format(
        "work outside the timed stream: the GPU was time-sliced with another context while {} was "
        "held (the device timer paused {:.0f} us, more than {:.0f})",
        what, hold.max_gap_us(), kMaxHoldGapUs);
}

}  // namespace

std::string held_host_time_failure(double host_us_median, double window_us_median) {
  if (host_us_median <= kMaxHeldHostUs || host_us_median <= kMaxHeldHostRatio * window_us_median) return "";
  return fmt::format(
      "work outside the timed stream: run() spent a median {:.0f} us on the host per call while the "
      "stream was held, {:.0f}x its timed GPU work of {:.2f} us (more than {:.0f} us and {:.0f}x): what a "
      "call does on the host, or the copies it waits for, is not in the timing",
      host_us_median, host_us_median / std::max(window_us_median, 1e-3), window_us_median, kMaxHeldHostUs,
      kMaxHeldHostRatio);
}

Measurement measure_device(const DeviceWork& work, int copies, int64_t bytes_per_copy,
                           const MeasureOptions& opt, const DeviceTimer& timer,
                           const SampleHooks* hooks) {
  Measurement m;
  m.timer = "cuda-events";
  m.mode = opt.mode;
  const cudaStream_t st = timer.stream;
  const bool flushed = opt.mode != MeasureMode::Hot;
  if (flushed && !timer.flusher) throw runtime_error("cold, rotate and graph timing need an L2 flusher");
  m.l2_flushed = flushed;
  m.persisting_l2_reset = flushed && timer.flusher->resets_persisting();
  m.launches_per_sample = uses_copies(opt.mode) ? launches_per_sample(opt.batch) : 1;
  m.copies = m.launches_per_sample;
  if (copies != m.copies)
    throw runtime_error(fmt::format("measure_device: {} operand copies for {} launches per sample",
                                    copies, m.launches_per_sample));
  m.rotation_bytes = bytes_per_copy * m.copies;

  const auto launch_batch = [&] {
    for (int i = 0; i < m.launches_per_sample; ++i) work(st, i);
  };
  GraphExec graph;
  const bool use_graph = opt.mode == MeasureMode::Graph;
  if (use_graph) graph.capture(st, launch_batch, "--mode graph");
  const auto body = [&] {
    if (use_graph) graph.launch(st);
    else launch_batch();
  };

  // A graph is one launch whatever its batch; a long batch of separate launches is not held.
  std::unique_ptr<StreamHold> own_hold;
  if (!timer.hold) {
    int ordinal = 0;
    NVFP4_CUDA_CHECK(cudaGetDevice(&ordinal));
    own_hold = std::make_unique<StreamHold>(ordinal);
  }
  StreamHold& hold = timer.hold ? *timer.hold : *own_hold;
  m.stream_held = use_graph || m.launches_per_sample <= kMaxHeldLaunches;
  if (!m.stream_held)
    m.stream_hold_note = fmt::format("stream not held: {} launches per sample could fill the "
                                     "launch queue", m.launches_per_sample);
  Event start, stop;
  int64_t run = 0, attempt = 0;
  // Every run, warm-up or sample, does the same: the hooks' work, the flush, the held window,
  // the hooks' work behind it, then after it. `sample` < 0: a warm-up.
  const auto one_run = [&](int64_t sample) -> TimedSample {
    const int64_t this_run = run++;
    if (hooks && hooks->before) hooks->before(st, this_run);
    if (flushed) timer.flusher->flush(st);
    const bool held = m.stream_held;
    if (held) hold.hold(st);
    if (timer.audit) timer.audit->open_window(st);
    NVFP4_CUDA_CHECK(cudaEventRecord(start.get(), st));
    const double h0 = steady_seconds();
    body();
    const double h1 = steady_seconds();
    NVFP4_CUDA_CHECK(cudaEventRecord(stop.get(), st));
    if (timer.audit) timer.audit->close_window(st);
    // Enqueued before the release, the hooks' work runs right as the window ends: work the call
    // left running on another stream cannot finish first.
    if (hooks && hooks->behind) hooks->behind(st, this_run);
    if (held) hold.release();
    NVFP4_CUDA_CHECK(cudaStreamSynchronize(st));
    TimedSample t;
    t.host_us = (h1 - h0) * 1e6 / m.launches_per_sample;
    const std::string what = sample < 0 ? fmt::format("warm-up run {}", this_run)
                                        : fmt::format("timed sample {}", sample);
    if (held) {
      note_hold(m, hold, what);
      if (hold.timed_out()) {
        // run() waited on the host for device work, its own or another stream's, which the held
        // SMs cannot run: this window holds host time. Taken again without the hold from here
        // on, so the windows hold the wait and the work it waited for: nothing is gained.
        t.dropped = true;
        ++m.holds_timed_out;
        m.stream_held = false;
        m.stream_hold_note = fmt::format("run() waited on the host for device work while the stream "
                                         "was held (the hold timed out after {:.0f} ms): timed without "
                                         "the hold from then on, the wait inside the window",
                                         hold.timeout_ms());
      }
    }
    if (!t.dropped) {
      float ms = 0;
      NVFP4_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      t.us = double(ms) * 1e3 / m.launches_per_sample;
    }
    if (hooks && hooks->after) hooks->after(st, this_run, sample);
    if (!t.dropped && timer.clock) t.clock_mhz = timer.clock->read_mhz(st);
    return t;
  };
  const auto warm = [&] { (void)one_run(-1); };
  const auto take = [&] { return one_run(attempt++); };
  m.clock.source = timer.clock ? timer.clock->source() : "none";
  // The audit records every run, warm-ups included; one that ends early (a wrong call under
  // --check-every-call) stops it unjudged.
  struct AuditScope {
    StreamAudit* a;
    bool ended = false;
    ~AuditScope() {
      if (a && !ended) {
        (void)cudaDeviceSynchronize();
        (void)a->end();
      }
    }
  } audit{timer.audit};
  if (timer.audit) timer.audit->begin();
  sample_loop(m, opt, warm, take, ClockPolicy{timer.default_clock_mhz, opt.min_clock_fraction},
              steady_seconds);
  // Every sample held (a timed-out hold times the rest with the host inside the window): the host
  // time per call against the window.
  if (m.stream_held && m.holds_timed_out == 0 && m.isolation_failure.empty() && m.host_call.count > 0)
    m.isolation_failure = held_host_time_failure(m.host_call.median, m.stats.median);
  if (m.stream_held) {
    // One more hold: a kernel of the last sample still running elsewhere shows in its skew.
    hold.hold(st);
    hold.release();
    NVFP4_CUDA_CHECK(cudaStreamSynchronize(st));
    note_hold(m, hold, "the GPU after the last sample");
  }
  if (timer.audit) {
    NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
    const AuditOutcome o = timer.audit->end();
    audit.ended = true;
    m.audited = true;
    m.audit_records = o.records;
    m.audit_windows = o.windows;
    m.audit_outside = o.outside;
    if (m.isolation_failure.empty()) m.isolation_failure = o.failure;
  }
  return m;
}

double read_gap_bound_us(int64_t bytes) { return kReadGapBaseUs + double(bytes) / kReadGapBytesPerUs; }

std::string read_gap_failure(double gap_us_median, double window_us_median, int64_t bytes) {
  const double bound = read_gap_bound_us(bytes);
  if (gap_us_median <= bound || gap_us_median <= kMaxReadGapRatio * window_us_median) return "";
  return fmt::format(
      "work outside the timed window: reading C after each call took a median {:.0f} us, {:.2f}x the "
      "call's {:.0f} us (more than {:.0f} us and {:.2f}x): the call's work went on after it returned, "
      "while the tool waited to read C",
      gap_us_median, gap_us_median / std::max(window_us_median, 1e-3), window_us_median, bound,
      kMaxReadGapRatio);
}

Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt,
                         const SampleHooks* hooks) {
  Measurement m;
  m.timer = "host-steady-clock";
  m.mode = MeasureMode::Hot;
  int64_t run = 0, attempt = 0;
  std::vector<double> gaps;
  const auto one_run = [&](int64_t sample) -> TimedSample {
    const int64_t this_run = run++;
    if (hooks && hooks->before) hooks->before(nullptr, this_run);
    const double t0 = steady_seconds();
    fn();
    const double t1 = steady_seconds();
    TimedSample t;
    t.us = t.host_us = (t1 - t0) * 1e6;  // the host clock times the whole call
    // The read of C right behind the call; how long it waited is judged over the samples.
    if (hooks && hooks->behind) {
      hooks->behind(nullptr, this_run);
      if (sample >= 0) gaps.push_back((steady_seconds() - t1) * 1e6);
    }
    if (hooks && hooks->after) hooks->after(nullptr, this_run, sample);
    return t;
  };
  const auto warm = [&] { (void)one_run(-1); };
  const auto take = [&] { return one_run(attempt++); };
  sample_loop(m, opt, warm, take, ClockPolicy{}, steady_seconds);
  if (!gaps.empty()) {
    m.read_gap = summarize(std::move(gaps));
    m.isolation_failure = read_gap_failure(m.read_gap.median, m.stats.median, hooks->behind_bytes);
  }
  return m;
}

}  // namespace nvfp4
