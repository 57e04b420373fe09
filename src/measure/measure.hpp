// Timing of device work (CUDA events) and host work (steady clock) in four modes:
//   cold    L2 flushed (and persisting lines reset) before each one-launch sample
//   hot     one-launch samples back to back, operands left in L2 by the previous run
//   rotate  each sample is a batch of back-to-back launches cycling over operand copies that
//           total >= 3x L2, so every launch finds its operands evicted; time / batch
//   graph   the same batch captured once in a CUDA graph and replayed (no launch gaps)
// Warm-up by count and time, then adaptive sampling (measure/sampler.hpp); samples taken at a
// low SM clock are dropped (measure/sm_clock.hpp). The stream is held while a sample's work is
// enqueued (measure/stream_hold.hpp), so no mode's window holds host enqueue time; the host's
// own time per call is recorded beside it. A TimedCheck sees what the timed calls wrote.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/measure/sampler.hpp"
#include "src/measure/sm_clock.hpp"
#include "src/measure/stats.hpp"

namespace nvfp4 {

enum class MeasureMode { Cold, Hot, Rotate, Graph };
const char* mode_name(MeasureMode m);
std::optional<MeasureMode> parse_mode(const std::string& s);
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
  std::string mode;   // mode_name(); "hot" for host timings (no cache is flushed there)
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
  // Device timer: whether the stream was held while each sample was enqueued, and why not.
  bool stream_held = false;
  std::string stream_hold_note;
  int64_t checked_samples = 0;  // samples whose outputs a TimedCheck collected
};

// Which timed samples have their outputs checked: the first, then attempts 2^k - 1 (1, 3, 7,
// ...): about log2(n) + 1 of n samples, spread over the whole run.
bool checked_attempt(int64_t attempt);

// One checked sample, for TimedCheck::collect: launches cycled over copies from first_copy.
struct TimedBatch {
  int64_t attempt = 0;
  int first_copy = 0, launches = 1, copies = 1;
};

// A check of what the timed calls wrote. Before a checked sample, outside its timed window (and
// before the L2 flush), `poison` overwrites the outputs (device work on `stream`; nullptr on the
// host); after the sample has finished, `collect` reads back what its calls wrote.
struct TimedCheck {
  std::function<void(cudaStream_t stream)> poison;
  std::function<void(const TimedBatch&)> collect;
};

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
};

// Copies whose inputs together reach 3x L2 (1 for cold/hot or when one copy already does).
int rotation_copies(MeasureMode mode, int64_t bytes_per_copy, size_t l2_bytes);
// Launches per rotate/graph sample: `requested`, else a multiple of `copies` of at least 20.
int launches_per_sample(int requested, int copies);

Measurement measure_device(const DeviceWork& work, int copies, int64_t bytes_per_copy,
                           const MeasureOptions& opt, const DeviceTimer& timer,
                           const TimedCheck* check = nullptr);
// Host timings: one call per sample, back to back; the mode is ignored (reported as hot).
Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt,
                         const TimedCheck* check = nullptr);

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
