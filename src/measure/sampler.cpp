#include "src/measure/sampler.hpp"

#include <algorithm>

namespace nvfp4 {

const char* stop_reason_text(StopReason r) {
  switch (r) {
    case StopReason::None: return "not stopped";
    case StopReason::NoiseTarget: return "noise target reached";
    case StopReason::FixedCount: return "fixed sample count";
    case StopReason::MaxSamples: return "max samples";
    case StopReason::MaxTime: return "max time";
  }
  return "not stopped";
}

void AdaptiveSampler::add(double sample_us) {
  ++attempts_;
  samples_.push_back(sample_us);
}

void AdaptiveSampler::add_dropped() {
  ++attempts_;
  ++dropped_;
}

bool AdaptiveSampler::done(double elapsed_s) {
  const int64_t n = int64_t(samples_.size());
  if (rule_.fixed_samples > 0) {
    if (n >= rule_.fixed_samples) reason_ = StopReason::FixedCount;
    else if (elapsed_s >= rule_.max_time_s) reason_ = StopReason::MaxTime;
    else if (attempts_ >= std::max(rule_.max_samples, rule_.fixed_samples)) reason_ = StopReason::MaxSamples;
    return reason_ != StopReason::None;
  }
  // Sorting every sample each time would be quadratic: refresh the estimate when the count
  // grew by 1/16 (and at least by one).
  if (n >= 2 && n >= noise_at_ + std::max<int64_t>(1, noise_at_ / 16)) {
    noise_ = summarize(samples_).rse_median();
    noise_at_ = n;
  }
  if (n >= rule_.min_samples && elapsed_s >= rule_.min_time_s && noise_at_ == n &&
      noise_ <= rule_.target_rse)
    reason_ = StopReason::NoiseTarget;
  else if (attempts_ >= rule_.max_samples)
    reason_ = StopReason::MaxSamples;
  else if (elapsed_s >= rule_.max_time_s)
    reason_ = StopReason::MaxTime;
  return reason_ != StopReason::None;
}

AdaptiveSampler run_sampling(const SamplingRule& rule, const SampleFn& take, const ClockFn& now) {
  AdaptiveSampler s(rule);
  const double t0 = now();
  do {
    const std::optional<double> v = take();
    if (v) s.add(*v);
    else s.add_dropped();
  } while (!s.done(now() - t0));
  return s;
}

}  // namespace nvfp4
