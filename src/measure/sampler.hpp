// The adaptive stopping rule: keep taking samples until the median's relative standard error
// falls under a target (after a minimum count and time), or a cap is hit. Pure logic: it sees
// sample values and elapsed times only, so tests drive it with a fake clock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/measure/stats.hpp"

namespace nvfp4 {

struct SamplingRule {
  // A fixed count (fixed_samples > 0) ignores every other field but max_time_s.
  int64_t fixed_samples = 0;
  int64_t min_samples = 10;
  int64_t max_samples = 100000;  // attempts, dropped ones included, so throttling can't loop
  double min_time_s = 0.5;       // wall time of sampling before the noise target may stop it
  double max_time_s = 10.0;      // wall-time cap
  double target_rse = 0.005;     // relative standard error of the median
};

enum class StopReason { None, NoiseTarget, FixedCount, MaxSamples, MaxTime };
// "noise target reached", "fixed sample count", "max samples", "max time".
const char* stop_reason_text(StopReason r);

class AdaptiveSampler {
 public:
  explicit AdaptiveSampler(const SamplingRule& rule) : rule_(rule) {}
  // Records one attempt; a dropped attempt (e.g. taken at a low clock) counts against
  // max_samples but not toward the statistics.
  void add(double sample_us);
  void add_dropped();
  // Whether to stop now, given the elapsed time; sets reason().
  bool done(double elapsed_s);
  StopReason reason() const { return reason_; }
  const std::vector<double>& samples() const { return samples_; }
  int64_t attempts() const { return attempts_; }
  int64_t dropped() const { return dropped_; }
  // The current noise estimate (rse of the median), recomputed at most every few samples.
  double noise() const { return noise_; }

 private:
  SamplingRule rule_;
  std::vector<double> samples_;
  int64_t attempts_ = 0, dropped_ = 0;
  int64_t noise_at_ = 0;  // sample count when noise_ was computed
  double noise_ = 0;
  StopReason reason_ = StopReason::None;
};

// What one attempt produced: a time in microseconds, or nothing when it was dropped.
using SampleFn = std::function<std::optional<double>()>;
// Seconds since an arbitrary origin (a steady clock in the tool, a fake one in tests).
using ClockFn = std::function<double()>;

// Runs `take` until the rule says stop; returns the sampler (samples, reason, counts).
AdaptiveSampler run_sampling(const SamplingRule& rule, const SampleFn& take, const ClockFn& now);

}  // namespace nvfp4
