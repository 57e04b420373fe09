// Summary statistics of timing samples.
#pragma once

#include <cstdint>
#include <vector>

namespace nvfp4 {

struct Stats {
  int64_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, stdev = 0;  // sample stdev (n-1)
  double q1 = 0, q3 = 0;                                      // quartiles (linear interpolation)
  double iqr() const { return q3 - q1; }
};

// Quantile q in [0,1] of sorted values, linear interpolation between closest ranks.
double quantile_sorted(const std::vector<double>& sorted, double q);
Stats summarize(std::vector<double> samples);

}  // namespace nvfp4
