// Comparing two native reports: cases matched by problem (m, n, k, l, dist), the kernel that was
// asked for (kernel.asked, e.g. "auto") and the one it resolved to (kernel.name); a case regresses
// when its median got slower beyond both a threshold and its measured noise, or when it passed
// before and does not now, whatever the reason (failed, unsupported, crashed, timed out, or
// missing from the new report). A passed case without a median > 0 is an invalid report.
//
// The noise comes from the samples themselves where both reports keep them (--samples): the
// Mann-Whitney U test of the two sample sets. Otherwise from each median's relative standard
// error, recomputed from the report's count, median and first quartile (the spread below the
// median: a busy machine's slow samples widen the IQR, not that), or its IQR where a version-1
// report has no quartiles; a stored rse_median that disagrees with count, median and IQR is an
// invalid report. Either way a side with fewer than min_samples samples gives no speed verdict
// ("not comparable"), which a gate treats as a failure of its own (kExitNotComparable).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "src/core/json.hpp"  // json_need

namespace nvfp4 {

// The fewest samples a side needs for a speed verdict by default (--min-samples); the host
// backend's default sampling takes this many (src/case/run_options.cpp).
inline constexpr int64_t kComparableSamples = 30;

struct CompareOptions {
  double threshold = 0.05;    // relative slowdown that counts (5%)
  double noise_factor = 3.0;  // ... and it must exceed this many combined standard errors
  // With samples on both sides: ... and the U test's two-sided p-value must be under alpha.
  double alpha = 0.01;
  // Fewer samples than this on either side: no verdict on speed. A median of a few samples has a
  // spread set by its one slowest sample, and the U test of 4 against 4 cannot reach p < 0.01.
  int64_t min_samples = kComparableSamples;
};
// The least --min-samples compare accepts (below it the gate could not fail on a slowdown).
inline constexpr int64_t kMinSamplesFloor = 5;

enum class Verdict { Slower, Faster, Unchanged, WithinNoise, NowFails, NowPasses, Missing, Added,
                     NotComparable };
const char* verdict_text(Verdict v);

struct CompareRow {
  std::string problem;  // "128x7168x16384 L=1 gpumode"
  std::string kernel;   // the resolved kernel ("auto → naive" when asked for auto)
  std::string base_disposition, new_disposition;  // empty when absent
  std::optional<double> base_us, new_us;          // kernel medians
  double change = 0;  // new/base - 1
  double noise = 0;   // combined relative standard error of the two medians (ReportCase::rse)
  std::optional<double> p_value;  // the U test's, where both sides kept their samples
  Verdict verdict = Verdict::Unchanged;
  bool regression = false;
  std::string note;   // e.g. "timing modes differ: cold vs hot"
  int64_t samples = 0;  // NotComparable: the smaller sample count of the two
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;  // report-level: different devices, backends
  int regressions() const;
  int not_comparable() const;  // rows with no speed verdict (too few samples)
};

// A report's cases, checked for the keys compare reads and for the agreement of its statistics
// (count within attempts, q1 <= median <= q3, iqr = q3 - q1, rse_median from count, median and
// iqr, samples_us of count values with that median); throws usage_error("WHAT: key: value;
// expected ...") with `what` naming the file.
struct ReportCase {
  std::string problem_key, problem, kernel, disposition, mode;
  // The kernel asked for: kernel.asked, or kernel.name in reports written before it was recorded.
  // A case that failed before its kernel was resolved has kernel == asked ("auto").
  std::string asked;
  bool timed = false;
  int64_t count = 0;
  double median_us = 0;
  double rse = 0;  // the median's relative standard error compare gates with (see the top)
  std::vector<double> samples;  // kernel_timing.samples_us where the report kept them
};
std::vector<ReportCase> read_report_cases(const nlohmann::json& report, const std::string& what);

CompareResult compare_reports(const nlohmann::json& base, const nlohmann::json& now,
                              const CompareOptions& opt, const std::string& base_name = "BASE",
                              const std::string& new_name = "NEW");
std::string compare_markdown(const CompareResult& r, const CompareOptions& opt);

}  // namespace nvfp4
