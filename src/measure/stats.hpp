// Summary statistics of timing samples, and the noise estimates the sampler and `compare` use.
#pragma once

#include <cstdint>
#include <vector>

namespace nvfp4 {

struct Stats {
  int64_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, stdev = 0;  // sample stdev (n-1)
  double q1 = 0, q3 = 0;                                      // quartiles (linear interpolation)
  // Distribution-free 95% confidence interval of the median from order statistics (no
  // bootstrap): ranks n/2 -+ 1.96*sqrt(n)/2. Equal to [min, max] for very few samples.
  double median_ci_lo = 0, median_ci_hi = 0;
  double iqr() const { return q3 - q1; }
  // Relative standard error of the mean: stdev / sqrt(n) / mean.
  double rse_mean() const;
  // Relative standard error of the median, robust to the long right tail of GPU timings:
  // sqrt(pi/2) * sigma / sqrt(n) / median with sigma estimated from the IQR (IQR / 1.349).
  double rse_median() const;
};

// The robust relative standard error of a median from summary numbers alone (what `compare`
// reads from a report): 0 when count < 2 or median <= 0.
double rse_median_of(int64_t count, double median, double iqr);
// The same estimate from the spread below the median alone (sigma = 2 (median - q1) / 1.349), what
// `compare` gates with: time a busy machine takes from a kernel only ever adds to a sample, so a
// few samples slowed many times over widen the IQR (and would hide a slowdown) but not this.
double rse_median_below_of(int64_t count, double median, double q1);

// Quantile q in [0,1] of sorted values, linear interpolation between closest ranks.
double quantile_sorted(const std::vector<double>& sorted, double q);
Stats summarize(std::vector<double> samples);

}  // namespace nvfp4
