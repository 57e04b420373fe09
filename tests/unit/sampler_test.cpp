// The adaptive stopping rule, driven by a fake clock and fake samples, and the sampling loop
// (warm-up by count and time, clock drops) with fake work.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "src/measure/measure.hpp"
#include "src/measure/sampler.hpp"

using namespace nvfp4;

namespace {

// A clock that advances by `step` seconds each time a sample is taken.
struct FakeClock {
  double t = 0, step = 0.01;
  ClockFn fn() {
    return [this] { return t; };
  }
};

SamplingRule rule(int64_t min_samples, int64_t max_samples, double min_t, double max_t, double target) {
  SamplingRule r;
  r.min_samples = min_samples;
  r.max_samples = max_samples;
  r.min_time_s = min_t;
  r.max_time_s = max_t;
  r.target_rse = target;
  return r;
}

}  // namespace

TEST(Sampler, QuietSamplesStopAtTheNoiseTargetOnceMinTimeAndCountAreMet) {
  FakeClock c;
  const auto s = run_sampling(rule(10, 100000, 0.5, 100, 0.005),
                              [&]() -> std::optional<double> { c.t += c.step; return 42.0; }, c.fn());
  EXPECT_EQ(s.reason(), StopReason::NoiseTarget);
  // 0.5 s of 0.01 s samples; noise is refreshed every n/16 samples, so a few more at most.
  EXPECT_GE(s.samples().size(), 50u);
  EXPECT_LE(s.samples().size(), 54u);
  // The minimum count binds when it is the larger requirement.
  FakeClock c2;
  const auto s2 = run_sampling(rule(200, 100000, 0.5, 100, 0.005),
                               [&]() -> std::optional<double> { c2.t += c2.step; return 42.0; }, c2.fn());
  EXPECT_EQ(s2.reason(), StopReason::NoiseTarget);
  EXPECT_GE(s2.samples().size(), 200u);
  EXPECT_LE(s2.samples().size(), 213u);
}

TEST(Sampler, NoisySamplesRunUntilTheErrorFallsUnderTheTarget) {
  // 5% spread: rse ~ 1.2533 * 0.05 / sqrt(n) reaches 0.5% near n = 157.
  std::mt19937 gen(7);
  std::normal_distribution<double> nd(100.0, 5.0);
  FakeClock c;
  c.step = 0.0001;
  const auto s = run_sampling(rule(10, 100000, 0, 100, 0.005),
                              [&]() -> std::optional<double> { c.t += c.step; return nd(gen); }, c.fn());
  EXPECT_EQ(s.reason(), StopReason::NoiseTarget);
  EXPECT_LE(s.noise(), 0.005);
  EXPECT_GT(s.samples().size(), 90u);
  EXPECT_LT(s.samples().size(), 300u);
  // Stopping at the minimum count would have been premature: 60 samples are still too noisy.
  const std::vector<double> first(s.samples().begin(), s.samples().begin() + 60);
  EXPECT_GT(summarize(first).rse_median(), 0.005);
}

TEST(Sampler, MaxTimeStopsANoisySource) {
  FakeClock c;
  int i = 0;
  const auto s = run_sampling(rule(10, 100000, 0.1, 2.0, 0.005),
                              [&]() -> std::optional<double> { c.t += 0.1; return (i++ % 2) ? 1.0 : 3.0; },
                              c.fn());
  EXPECT_EQ(s.reason(), StopReason::MaxTime);
  EXPECT_EQ(s.samples().size(), 20u);
  EXPECT_STREQ(stop_reason_text(s.reason()), "max time");
}

TEST(Sampler, MaxSamplesStopsWhenTheClockStandsStill) {
  FakeClock c;  // never advances
  int i = 0;
  const auto s = run_sampling(rule(10, 500, 0.1, 2.0, 0.005),
                              [&]() -> std::optional<double> { return (i++ % 2) ? 1.0 : 3.0; }, c.fn());
  EXPECT_EQ(s.reason(), StopReason::MaxSamples);
  EXPECT_EQ(s.attempts(), 500);
  EXPECT_STREQ(stop_reason_text(s.reason()), "max samples");
}

TEST(Sampler, DroppedAttemptsCountAgainstMaxSamplesButNotTheStatistics) {
  FakeClock c;
  const auto s = run_sampling(rule(10, 50, 0, 100, 0.005),
                              []() -> std::optional<double> { return std::nullopt; }, c.fn());
  EXPECT_EQ(s.reason(), StopReason::MaxSamples);
  EXPECT_EQ(s.dropped(), 50);
  EXPECT_TRUE(s.samples().empty());
}

TEST(Sampler, FixedCountIgnoresTheNoiseTarget) {
  FakeClock c;
  SamplingRule r = rule(10, 100000, 0.5, 100, 0.005);
  r.fixed_samples = 7;
  int i = 0;
  const auto s = run_sampling(r, [&]() -> std::optional<double> { c.t += 0.01; return 1.0 + (i++ % 3); },
                              c.fn());
  EXPECT_EQ(s.reason(), StopReason::FixedCount);
  EXPECT_EQ(s.samples().size(), 7u);
  EXPECT_STREQ(stop_reason_text(s.reason()), "fixed sample count");
}

TEST(Sampler, FixedCountStillHonoursMaxTime) {
  FakeClock c;
  SamplingRule r = rule(10, 100000, 0.5, 1.0, 0.005);
  r.fixed_samples = 1000;
  const auto s = run_sampling(r, [&]() -> std::optional<double> { c.t += 0.25; return 1.0; }, c.fn());
  EXPECT_EQ(s.reason(), StopReason::MaxTime);
  EXPECT_EQ(s.samples().size(), 4u);
}

// The loop around the sampler: warm-up by count and by time, then clock-checked samples.
TEST(SampleLoop, WarmUpRunsUntilBothCountAndTimeAreMet) {
  FakeClock c;
  MeasureOptions o;
  o.iters = 3;
  o.warmup = 2;
  o.warmup_s = 1.0;
  int warm = 0;
  Measurement m;
  sample_loop(m, o, [&] { ++warm; c.t += 0.3; }, [&] { c.t += 0.01; return TimedSample{5.0, {}}; },
              ClockPolicy{}, c.fn());
  EXPECT_EQ(warm, 4);  // 2 runs reach the count at 0.6 s; time needs 4 (1.2 s)
  EXPECT_EQ(m.warmup_runs, 4);
  EXPECT_NEAR(m.warmup_s, 1.2, 1e-9);
  EXPECT_EQ(m.samples_us.size(), 3u);

  FakeClock c2;
  o.warmup = 5;
  o.warmup_s = 0.1;
  warm = 0;
  Measurement m2;
  sample_loop(m2, o, [&] { ++warm; c2.t += 0.3; }, [&] { return TimedSample{5.0, {}}; }, ClockPolicy{},
              c2.fn());
  EXPECT_EQ(warm, 5);  // the count binds
}

// A warm-up count (or time) that would outrun --max-time stops at it, as sampling does.
TEST(SampleLoop, WarmUpIsCappedByTheMaxTime) {
  FakeClock c;
  MeasureOptions o;
  o.iters = 2;
  o.warmup = 2000000000;
  o.warmup_s = 0.05;
  o.sampling.max_time_s = 3.0;
  int warm = 0;
  Measurement m;
  sample_loop(m, o, [&] { ++warm; c.t += 0.5; }, [&] { c.t += 0.01; return TimedSample{5.0, {}}; },
              ClockPolicy{}, c.fn());
  EXPECT_EQ(warm, 6);  // 6 x 0.5 s reaches the 3 s cap; the count asked for 2e9
  EXPECT_EQ(m.warmup_runs, 6);

  FakeClock c2;
  o.warmup = 1;
  o.warmup_s = 1e9;  // likewise a warm-up time past the cap
  warm = 0;
  Measurement m2;
  sample_loop(m2, o, [&] { ++warm; c2.t += 1.0; }, [&] { return TimedSample{5.0, {}}; }, ClockPolicy{},
              c2.fn());
  EXPECT_EQ(warm, 3);
}

TEST(SampleLoop, SamplesBelowThreeQuartersOfTheDefaultClockAreDroppedAndRecorded) {
  FakeClock c;
  MeasureOptions o;
  o.iters = 6;
  o.warmup = 0;
  o.warmup_s = 0;
  // Default 1980 MHz: threshold 1485. 1400 and 1000 are dropped; 1485 exactly is kept.
  const std::vector<std::pair<double, double>> feed = {
      {10, 1980}, {99, 1400}, {11, 1950}, {98, 1000}, {12, 1485}, {13, 1900}, {14, 1970}, {15, 1960}};
  size_t i = 0;
  Measurement m;
  sample_loop(m, o, [] {}, [&] {
    c.t += 0.01;
    const auto& f = feed[i++];
    return TimedSample{f.first, f.second};
  }, ClockPolicy{1980, 0.75}, c.fn());
  EXPECT_EQ(m.samples_us, (std::vector<double>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(m.clock.dropped_low_clock, 2);
  EXPECT_EQ(m.attempts, 8);
  EXPECT_EQ(m.clock.read, 6);
  EXPECT_DOUBLE_EQ(m.clock.min_mhz, 1485);
  EXPECT_DOUBLE_EQ(m.clock.max_mhz, 1980);
  EXPECT_DOUBLE_EQ(m.clock.median_mhz, (1950 + 1960) / 2.0);
  EXPECT_DOUBLE_EQ(m.clock.policy.threshold_mhz(), 1485);
  EXPECT_EQ(m.stop_reason, "fixed sample count");
  EXPECT_DOUBLE_EQ(m.stats.median, 12.5);
}

TEST(ClockPolicy, UnknownClocksAndUnknownDefaultsKeepTheSample) {
  const ClockPolicy p{2000, 0.75};
  EXPECT_TRUE(p.keep(std::nullopt));
  EXPECT_TRUE(p.keep(1500.0));
  EXPECT_FALSE(p.keep(1499.0));
  EXPECT_TRUE(ClockPolicy{}.keep(1.0));             // default unknown
  EXPECT_TRUE((ClockPolicy{2000, 0.0}).keep(1.0));  // --min-clock 0 keeps all
}

TEST(Rotation, OneCopyPerLaunch) {
  EXPECT_EQ(operand_copies(MeasureMode::Cold, 0), 1);
  EXPECT_EQ(operand_copies(MeasureMode::Hot, 7), 1);
  EXPECT_EQ(operand_copies(MeasureMode::Rotate, 0), 20);
  EXPECT_EQ(operand_copies(MeasureMode::Graph, 5), 5);
  EXPECT_EQ(launches_per_sample(0), 20);
  EXPECT_EQ(launches_per_sample(5), 5);
  EXPECT_EQ(parse_mode("graph"), MeasureMode::Graph);
  EXPECT_FALSE(parse_mode("warm"));
}

TEST(MeasureHost, TimesRealWorkAndReportsHot) {
  MeasureOptions o;
  o.iters = 5;
  o.warmup = 1;
  o.warmup_s = 0;
  int calls = 0;
  volatile double sink = 0;
  const Measurement m = measure_host([&] {
    ++calls;
    for (int i = 0; i < 20000; ++i) sink = sink + std::sqrt(double(i));
  }, o);
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(m.stats.count, 5);
  EXPECT_GT(m.stats.min, 0);
  EXPECT_EQ(m.mode, MeasureMode::Hot);
  EXPECT_FALSE(m.l2_flushed);
  EXPECT_EQ(m.clock.source, "none");
}
