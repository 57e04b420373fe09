// Timing of device work (CUDA events) and host work (steady clock) in four modes:
//   cold    L2 flushed (and persisting lines reset) before each one-launch sample
//   hot     one-launch samples back to back, operands left in L2 by the previous run
//   rotate  each sample is a batch of back-to-back launches cycling over operand copies that
//           total >= 3x L2, so every launch finds its operands evicted; time / batch
//   graph   the same batch captured once in a CUDA graph and replayed (no launch gaps)
// Warm-up by count and time, then adaptive sampling (measure/sampler.hpp); samples taken at a
// low SM clock are dropped (measure/sm_clock.hpp).
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
                           const MeasureOptions& opt, const DeviceTimer& timer);
// Host timings: one call per sample, back to back; the mode is ignored (reported as hot).
Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt);

// The sampling loop shared by both timers: warm-up (count and time) then adaptive samples;
// `take` returns a sample and the clock read with it. Exposed for tests (fake clock, fake work).
struct TimedSample {
  double us = 0;
  std::optional<double> clock_mhz;
};
void sample_loop(Measurement& m, const MeasureOptions& opt, const std::function<void()>& warm,
                 const std::function<TimedSample()>& take, const ClockPolicy& policy,
                 const ClockFn& now);

}  // namespace nvfp4
