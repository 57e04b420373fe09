// The Mann-Whitney U test (Wilcoxon rank-sum) of two sets of timing samples: whether one run's
// times are drawn from a slower or faster distribution than the other's, with no assumption about
// the shape of either (GPU and host timings have long right tails). What `compare` uses when both
// reports keep their samples (--samples), as Google Benchmark's tools/compare.py does.
#pragma once

#include <vector>

namespace nvfp4 {

// The two-sided p-value of the hypothesis that `a` and `b` come from one distribution: exact
// (every arrangement of the ranks counted) when neither set has ties and the sets are small
// (|a| * |b| <= 2500), else the normal approximation with tie and continuity corrections.
// 1 when either set is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace nvfp4
