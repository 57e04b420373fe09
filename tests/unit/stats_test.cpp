#include <gtest/gtest.h>

#include <cmath>

#include "src/measure/stats.hpp"

using namespace nvfp4;

TEST(Stats, KnownValues) {
  const Stats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.iqr(), 2);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
}

TEST(Stats, EvenCountMedianInterpolates) {
  EXPECT_DOUBLE_EQ(summarize({1, 2, 3, 10}).median, 2.5);
  EXPECT_EQ(summarize({}).count, 0);
  EXPECT_DOUBLE_EQ(summarize({7}).stdev, 0);
}

TEST(Stats, MedianConfidenceIntervalFromOrderStatistics) {
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61 (1-based), the textbook 95% pair.
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const Stats s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median_ci_lo, 40);
  EXPECT_DOUBLE_EQ(s.median_ci_hi, 61);
  EXPECT_LE(s.median_ci_lo, s.median);
  EXPECT_GE(s.median_ci_hi, s.median);
  // Too few samples for a 95% interval: it widens to the whole range.
  const Stats few = summarize({3, 1, 2});
  EXPECT_DOUBLE_EQ(few.median_ci_lo, 1);
  EXPECT_DOUBLE_EQ(few.median_ci_hi, 3);
}

TEST(Stats, RelativeStandardErrors) {
  const Stats s = summarize({5, 1, 4, 2, 3});
  // stdev 1.5811 / sqrt(5) / mean 3
  EXPECT_NEAR(s.rse_mean(), std::sqrt(2.5) / std::sqrt(5.0) / 3.0, 1e-12);
  // sqrt(pi/2) * (IQR 2 / 1.349) / sqrt(5) / median 3
  EXPECT_NEAR(s.rse_median(), 1.2533141 * (2.0 / 1.3489795) / std::sqrt(5.0) / 3.0, 1e-6);
  EXPECT_DOUBLE_EQ(s.rse_median(), rse_median_of(5, 3, 2));
  // Quadrupling the samples halves the error of the same spread.
  std::vector<double> four;
  for (int r = 0; r < 4; ++r)
    for (double x : {5, 1, 4, 2, 3}) four.push_back(x);
  EXPECT_NEAR(summarize(four).rse_median() * 2, s.rse_median(), 0.2 * s.rse_median());
  EXPECT_DOUBLE_EQ(summarize({7}).rse_median(), 0);
  EXPECT_DOUBLE_EQ(summarize({4, 4, 4, 4}).rse_mean(), 0);
  EXPECT_DOUBLE_EQ(rse_median_of(10, 0, 1), 0);  // no median, no relative error
}

TEST(Stats, RobustNoiseIgnoresOneOutlierThatInflatesTheMeanError) {
  std::vector<double> v(99, 100.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] += double(i % 3);  // 100, 101, 102
  v.push_back(10000.0);                                          // one preempted sample
  const Stats s = summarize(v);
  EXPECT_LT(s.rse_median(), 0.003);  // 1.2533 * (2 / 1.349) / 10 / 101 = 0.0018
  EXPECT_GT(s.rse_mean(), 0.3);
}

TEST(Stats, TheSpreadBelowTheMedianIgnoresAQuarterOfSlowSamples) {
  // Symmetric samples: twice the lower half's spread is the IQR, so both estimates agree.
  std::vector<double> v;
  for (int i = 0; i < 41; ++i) v.push_back(100.0 + i);
  Stats s = summarize(v);
  EXPECT_DOUBLE_EQ(rse_median_below_of(s.count, s.median, s.q1), s.rse_median());
  // 11 of the 41 samples slowed 50x (time slices lost to other processes): the upper quartile
  // is one of them and the IQR-based estimate grows ~100-fold; the lower half's does not move.
  for (int i = 30; i < 41; ++i) v[size_t(i)] *= 50;
  s = summarize(v);
  EXPECT_GT(s.rse_median(), 0.5);
  EXPECT_LT(rse_median_below_of(s.count, s.median, s.q1), 0.05);
  // Never negative, whatever a report says.
  EXPECT_EQ(rse_median_below_of(30, 100, 120), 0.0);
}
