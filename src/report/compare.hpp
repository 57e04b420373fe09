// Comparing two native reports: cases matched by problem (m, n, k, l, dist), the kernel that was
// asked for (kernel.asked, e.g. "auto") and the one it resolved to (kernel.name); a case regresses
// when its median got slower beyond both a threshold and its measured noise, or when it passed
// before and does not now, whatever the reason (failed, unsupported, crashed, timed out, or
// missing from the new report). A passed case without a median > 0 is an invalid report.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "src/core/json.hpp"  // json_need

namespace nvfp4 {

struct CompareOptions {
  double threshold = 0.05;    // relative slowdown that counts (5%)
  double noise_factor = 3.0;  // ... and it must exceed this many combined standard errors
  // Fewer samples than this on either side: no verdict on speed (a median of 1 or 2 samples has
  // no measured spread, so any change would read as beyond the noise).
  int64_t min_samples = 3;
};

enum class Verdict { Slower, Faster, Unchanged, WithinNoise, NowFails, NowPasses, Missing, Added,
                     NotComparable };
const char* verdict_text(Verdict v);

struct CompareRow {
  std::string problem;  // "128x7168x16384 L=1 gpumode"
  std::string kernel;   // the resolved kernel ("auto → naive" when asked for auto)
  std::string base_disposition, new_disposition;  // empty when absent
  std::optional<double> base_us, new_us;          // kernel medians
  double change = 0;  // new/base - 1
  double noise = 0;   // combined relative standard error of the two medians
  Verdict verdict = Verdict::Unchanged;
  bool regression = false;
  std::string note;   // e.g. "timing modes differ: cold vs hot"
  int64_t samples = 0;  // NotComparable: the smaller sample count of the two
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;  // report-level: different devices, backends
  int regressions() const;
};

// A report's cases, checked for the keys compare reads; throws usage_error("WHAT: key: problem")
// with `what` naming the file.
struct ReportCase {
  std::string problem_key, problem, kernel, disposition, mode;
  // The kernel asked for: kernel.asked, or kernel.name in reports written before it was recorded.
  // A case that failed before its kernel was resolved has kernel == asked ("auto").
  std::string asked;
  bool timed = false;
  int64_t count = 0;
  double median_us = 0, rse = 0;
};
std::vector<ReportCase> read_report_cases(const nlohmann::json& report, const std::string& what);

CompareResult compare_reports(const nlohmann::json& base, const nlohmann::json& now,
                              const CompareOptions& opt, const std::string& base_name = "BASE",
                              const std::string& new_name = "NEW");
std::string compare_markdown(const CompareResult& r, const CompareOptions& opt);

}  // namespace nvfp4
