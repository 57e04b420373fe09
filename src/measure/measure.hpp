// Timing of device work (CUDA events) and host work (steady clock) in four modes:
//   cold    L2 flushed (and persisting lines reset) before each one-launch sample
//   hot     one-launch samples back to back, operands left in L2 by the previous run
//   rotate  each sample is a batch of back-to-back launches, each on an operand copy of its own,
//           L2 flushed before the batch, so every launch finds its operands out of L2; time / batch
//   graph   the same batch captured once in a CUDA graph and replayed (no launch gaps)
// Warm-up by count and time, then adaptive sampling (measure/sampler.hpp); samples taken at a
// low SM clock are dropped (measure/sm_clock.hpp). The stream is held while a sample's work is
// enqueued (measure/stream_hold.hpp), so no mode's window holds host enqueue time; the host's
// own time per call is recorded beside it. SampleHooks do the verdict's work around every run.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/measure/sampler.hpp"
#include "src/measure/sm_clock.hpp"
#include "src/measure/stats.hpp"

namespace nvfp4 {

class StreamAudit;

class StreamHold;

enum class MeasureMode { Cold, Hot, Rotate, Graph };
const char* mode_name(MeasureMode m);
std::optional<MeasureMode> parse_mode(const std::string& s);
// "cold, hot, rotate, graph": what parse_mode takes, for messages.
std::string mode_list();
inline bool uses_copies(MeasureMode m) { return m == MeasureMode::Rotate || m == MeasureMode::Graph; }

struct MeasureOptions {
  MeasureMode mode = MeasureMode::Cold;
  int warmup = 3;           // warm-up runs, at least ...
  double warmup_s = 0.05;   // ... and at least this many seconds of them
  int iters = 0;            // > 0: exactly this many samples; 0: adaptive (`sampling`)
  SamplingRule sampling;    // fixed_samples is set from iters
  int batch = 0;            // launches per sample in rotate/graph modes; 0: automatic
  double min_clock_fraction = 0.75;  // drop samples below this fraction of the default SM clock
  SamplingRule rule() const {
    SamplingRule r = sampling;
    r.fixed_samples = iters;
    return r;
  }
};

struct Measurement {
  std::string timer;  // "cuda-events" or "host-steady-clock"
  MeasureMode mode = MeasureMode::Cold;  // Hot for host timings (no cache is flushed there)
  bool l2_flushed = false;
  bool persisting_l2_reset = false;
  int copies = 1;                    // operand copies cycled over
  int64_t rotation_bytes = 0;        // bytes of all copies together
  int launches_per_sample = 1;
  int warmup_runs = 0;
  double warmup_s = 0;
  double sampling_s = 0;             // wall time of the sampling loop
  std::string stop_reason;           // stop_reason_text()
  int64_t attempts = 0;              // samples taken, dropped ones included
  std::vector<double> samples_us;    // kept samples, per launch
  std::vector<double> clock_mhz;     // the SM clock read after each kept sample (when read)
  ClockRecord clock;
  Stats stats;  // over samples_us
  // Host time per call: what enqueueing one launch cost the host (device timer), or the whole
  // call (host timer, the same clock as the samples). Over kept samples.
  Stats host_call;
  // Host timer: from a call's return until the tool had read its C (the hooks' `behind`), over
  // kept samples; read_gap_failure() judges it.
  Stats read_gap;
  // Device timer: whether the stream was held while each sample was enqueued, and why not.
  bool stream_held = false;
  std::string stream_hold_note;
  // What the stream holds saw (device timer, held samples and one hold after the last): holds
  // that timed out, the widest start skew of a hold's CTAs, the longest pause of the timer.
  int holds = 0;
  int holds_timed_out = 0;
  double max_start_skew_us = 0;
  // --audit-streams (src/measure/stream_audit.hpp): what CUPTI saw, when it was on.
  bool audited = false;
  int64_t audit_records = 0, audit_windows = 0, audit_outside = 0;
  double max_gap_us = 0;
  std::string isolation_failure;  // empty: nothing ran outside the timed stream that they saw
};

// The verdict's work around every run the timer makes, warm-ups included, so no call can tell
// a verified one from another (src/case/checked_runs.cpp, docs/cli.md "The verdict").
struct SampleHooks {
  // Before run `run` (counted from 0 over warm-ups and samples), outside its window and before
  // the L2 flush and the stream hold: device work on `stream` (nullptr on the host).
  std::function<void(cudaStream_t stream, int64_t run)> before;
  // Right behind run `run`'s window, before the stream hold is released: device work on `stream`
  // that must run before anything else can (the gather of the outputs into pinned memory). It
  // must not wait on the host: the stream is still held. On the host (stream nullptr): the read
  // of C, right as the call returns; the timer records how long it waited (Measurement::read_gap).
  std::function<void(cudaStream_t stream, int64_t run)> behind;
  int64_t behind_bytes = 0;  // host: the bytes `behind` reads (read_gap_bound_us grows with them)
  // After run `run` and the work `behind` enqueued have finished; `sample` is its attempt number
  // among the timed samples, -1 for a warm-up. May throw VerdictStop.
  std::function<void(cudaStream_t stream, int64_t run, int64_t sample)> after;
};

// Ends the timing of a kernel that the verdict has already judged incorrect (a wrong call under
// --check-every-call); `part` names the check ("timed_outputs").
class VerdictStop : public Error {
 public:
  VerdictStop(std::string part, const std::string& msg)
      : Error(kExitVerifyFailed, msg), part_(std::move(part)) {}
  const std::string& part() const { return part_; }

 private:
  std::string part_;
};

// A hold whose CTAs started further apart found another kernel on the SMs; a longer pause of the
// device's timer while it spun means the context was time-sliced with another.
constexpr double kMaxHoldStartSkewUs = 50;
constexpr double kMaxHoldGapUs = 500;

// The host time of a held call is outside the window by design (its enqueue). A call that spends
// more than kMaxHeldHostUs on the host AND more than kMaxHeldHostRatio times its timed GPU work
// is doing the work there - computing on the CPU, or waiting for copies of the operands it made
// on another stream (the hold occupies the SMs, not the copy engines) - and the window leaves it
// out. Honest calls are far below both: a GPU kernel's enqueue takes microseconds, a Python call's
// tens to hundreds. "" where the medians are within either bound, else the failure line.
constexpr double kMaxHeldHostUs = 1000;
constexpr double kMaxHeldHostRatio = 20;
std::string held_host_time_failure(double host_us_median, double window_us_median);

// The host timer's twin: after a host call returns, the tool reads its C at once (microseconds to
// a copy of C, far below the GEMM that wrote it). A median wait over read_gap_bound_us (a system
// call's worth plus the copy of C at a pessimistic rate) AND over kMaxReadGapRatio times the call
// is work the call left to run while the tool waited to read C -
// a thread of the kernel's it blocks on, a handler of the kernel's that interrupts it - outside
// the window. "" within either bound, else the failure line.
// (a bound of 1 ms let a kernel stall the read on the process's memory lock, its own mprotect of
// 96 MB, for ~0.9 ms a call and pass 17x faster than honest: the red-team's fifth round)
constexpr double kReadGapBaseUs = 100;
constexpr double kReadGapBytesPerUs = 1000;  // 1 GB/s
constexpr double kMaxReadGapRatio = 0.25;
double read_gap_bound_us(int64_t bytes);
std::string read_gap_failure(double gap_us_median, double window_us_median, int64_t bytes);

// Writes a buffer of twice the L2 size before each cold sample so no operand stays cached;
// persisting L2 lines (cudaAccessPolicyWindow) are reset to normal first, where supported.
class L2Flusher {
 public:
  L2Flusher(size_t l2_bytes, int device_ordinal);
  void flush(cudaStream_t stream);
  size_t bytes() const { return buf_.bytes(); }
  bool resets_persisting() const { return persisting_; }

 private:
  DeviceBuffer buf_;
  bool persisting_ = false;
};

// The measured work: one run on `stream` reading operand copy `copy` (0 <= copy < copies).
// The caller allocates the copies (A, B and scales; C may be shared) and says how many.
using DeviceWork = std::function<void(cudaStream_t stream, int copy)>;

// What the device timer needs from the machine, set up once per run.
struct DeviceTimer {
  cudaStream_t stream = nullptr;
  L2Flusher* flusher = nullptr;      // needed by cold mode
  SmClockReader* clock = nullptr;    // nullptr: clocks not read
  double default_clock_mhz = 0;      // DeviceInfo::clock_khz / 1000
  size_t l2_bytes = 0;
  StreamHold* hold = nullptr;        // nullptr: one is made for the current device
  StreamAudit* audit = nullptr;      // --audit-streams: CUPTI's records judged after timing
};

// Launches per rotate/graph sample: `requested`, else 20 (amortizes the event resolution of
// ~0.5 us and the graph launch). Each launch has an operand copy and an output slot of its own.
int launches_per_sample(int requested);
// Operand copies (and output slots) a mode uses: one per launch of a sample.
inline int operand_copies(MeasureMode mode, int requested) {
  return uses_copies(mode) ? launches_per_sample(requested) : 1;
}

// Launch i of a sample runs copy i (0 <= i < copies = operand_copies(opt.mode, opt.batch)). The
// L2 is flushed before every sample in cold, rotate and graph modes, so every launch of those
// finds its operands out of L2.
Measurement measure_device(const DeviceWork& work, int copies, int64_t bytes_per_copy,
                           const MeasureOptions& opt, const DeviceTimer& timer,
                           const SampleHooks* hooks = nullptr);
// Host timings: one call per sample, back to back; the mode is ignored (reported as hot).
Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt,
                         const SampleHooks* hooks = nullptr);

// The sampling loop shared by both timers: warm-up (count and time) then adaptive samples;
// `take` returns a sample and the clock read with it. Exposed for tests (fake clock, fake work).
struct TimedSample {
  double us = 0;
  std::optional<double> clock_mhz;
  double host_us = 0;    // host time per call of this sample
  bool dropped = false;  // not a valid sample (e.g. the stream hold timed out): taken again
};
void sample_loop(Measurement& m, const MeasureOptions& opt, const std::function<void()>& warm,
                 const std::function<TimedSample()>& take, const ClockPolicy& policy,
                 const ClockFn& now);

}  // namespace nvfp4
