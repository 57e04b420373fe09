#include "src/report/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace nvfp4 {

namespace {

// P(U <= u) for sizes m and n with no ties: the number of arrangements of m a's and n b's with
// u (a, b) pairs where b comes first, over all C(m+n, m) of them. count[j][u] holds it for the
// first i a's and j b's, built up one a at a time (f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u)).
double exact_cdf(int m, int n, int u) {
  const int top = m * n;
  std::vector<std::vector<double>> prev(size_t(n + 1), std::vector<double>(size_t(top + 1), 0.0));
  for (int j = 0; j <= n; ++j) prev[size_t(j)][0] = 1.0;  // i = 0: one arrangement, U = 0
  for (int i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> cur(size_t(n + 1), std::vector<double>(size_t(top + 1), 0.0));
    cur[0][0] = 1.0;
    for (int j = 1; j <= n; ++j)
      for (int v = 0; v <= i * j; ++v)
        cur[size_t(j)][size_t(v)] =
            (v >= j ? prev[size_t(j)][size_t(v - j)] : 0.0) + cur[size_t(j - 1)][size_t(v)];
    prev = std::move(cur);
  }
  double below = 0, total = 0;
  for (int v = 0; v <= top; ++v) {
    total += prev[size_t(n)][size_t(v)];
    if (v <= u) below += prev[size_t(n)][size_t(v)];
  }
  return below / total;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t m = a.size(), n = b.size();
  if (m == 0 || n == 0) return 1.0;
  std::vector<std::pair<double, int>> all;  // value, which set (0: a)
  for (double v : a) all.push_back({v, 0});
  for (double v : b) all.push_back({v, 1});
  std::sort(all.begin(), all.end());
  // Average ranks over ties; the tie term sum(t^3 - t) corrects the variance.
  double rank_sum_a = 0, ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double t = double(j - i), rank = (double(i + 1) + double(j)) / 2.0;
    for (size_t k = i; k < j; ++k) rank_sum_a += all[k].second == 0 ? rank : 0.0;
    ties += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_a - double(m) * double(m + 1) / 2.0;  // pairs where a is larger
  const double mn = double(m) * double(n), mean = mn / 2.0;
  if (ties == 0 && mn <= 2500) {
    // Symmetric distribution: the smaller tail, doubled.
    const int lo = int(std::lround(std::min(u, mn - u)));
    return std::min(1.0, 2.0 * exact_cdf(int(m), int(n), lo));
  }
  const double N = double(m + n);
  const double var = mn / 12.0 * ((N + 1.0) - ties / (N * (N - 1.0)));
  if (!(var > 0)) return 1.0;  // every value the same
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace nvfp4
