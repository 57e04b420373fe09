#include "src/measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nvfp4 {

namespace {
constexpr double kSqrtHalfPi = 1.2533141373155003;  // efficiency of the median vs the mean
constexpr double kIqrPerSigma = 1.3489795003921634; // IQR of a normal distribution / sigma
}  // namespace

double rse_median_of(int64_t count, double median, double iqr) {
  if (count < 2 || !(median > 0)) return 0.0;
  const double sigma = iqr / kIqrPerSigma;
  return kSqrtHalfPi * sigma / std::sqrt(double(count)) / median;
}

double rse_median_below_of(int64_t count, double median, double q1) {
  return rse_median_of(count, median, 2.0 * std::max(median - q1, 0.0));
}

double Stats::rse_mean() const {
  if (count < 2 || !(mean > 0)) return 0.0;
  return stdev / std::sqrt(double(count)) / mean;
}

double Stats::rse_median() const { return rse_median_of(count, median, iqr()); }

double quantile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

Stats summarize(std::vector<double> v) {
  Stats s;
  s.count = int64_t(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = quantile_sorted(v, 0.5);
  s.q1 = quantile_sorted(v, 0.25);
  s.q3 = quantile_sorted(v, 0.75);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(ss / double(v.size() - 1));
  }
  // Order-statistic interval: the number of samples below the median is Binomial(n, 1/2).
  const double n = double(v.size());
  const double half = 1.959963984540054 * std::sqrt(n) / 2.0;
  const double lo_rank = std::floor(n / 2.0 - half);        // 1-based rank
  const double hi_rank = std::ceil(n / 2.0 + half) + 1.0;   // 1-based rank
  s.median_ci_lo = v[size_t(std::clamp(lo_rank, 1.0, n)) - 1];
  s.median_ci_hi = v[size_t(std::clamp(hi_rank, 1.0, n)) - 1];
  return s;
}

}  // namespace nvfp4
