// compare: matching, the regression rule (threshold AND noise), verification changes, and
// one-line errors for invalid reports.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/measure/stats.hpp"
#include "src/report/compare.hpp"
#include "src/report/rank_test.hpp"

#include <algorithm>
#include <cmath>

using namespace nvfp4;
using nlohmann::json;

namespace {

json make_case(int64_t m, const char* kernel, double median_us, double iqr_us, int64_t count,
               const char* disposition = "passed") {
  return {{"problem", {{"m", m}, {"n", 7168}, {"k", 16384}, {"l", 1}, {"dist", "gpumode"}, {"seed", 0}}},
          {"kernel", {{"name", kernel}, {"description", ""}}},
          {"disposition", disposition},
          {"kernel_timing",
           {{"ran", true}, {"mode", "cold"},
            {"stats", {{"count", count}, {"median_us", median_us}, {"iqr_us", iqr_us}}}}}};
}

json report(std::vector<json> cases) {
  return {{"schema_version", 2}, {"backend", "cuda"}, {"device", {{"name", "H200"}}}, {"cases", cases}};
}

}  // namespace

TEST(Compare, SameReportIsUnchanged) {
  const json r = report({make_case(128, "naive", 100, 1, 100), make_case(256, "naive", 50, 0.5, 100)});
  const CompareResult c = compare_reports(r, r, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.regressions(), 0);
  for (const auto& row : c.rows) {
    EXPECT_EQ(row.verdict, Verdict::Unchanged);
    EXPECT_DOUBLE_EQ(row.change, 0);
  }
}

TEST(Compare, TenPercentSlowerWithLowNoiseIsARegression) {
  const json base = report({make_case(128, "naive", 100, 1, 100)});
  const json now = report({make_case(128, "naive", 110, 1.1, 100)});
  const CompareResult c = compare_reports(base, now, {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::Slower);
  EXPECT_TRUE(c.rows[0].regression);
  EXPECT_NEAR(c.rows[0].change, 0.10, 1e-12);
  EXPECT_LT(c.rows[0].noise, 0.01);
  EXPECT_EQ(c.regressions(), 1);
  // And 10% faster is no regression.
  EXPECT_EQ(compare_reports(now, base, {}).rows[0].verdict, Verdict::Faster);
  EXPECT_EQ(compare_reports(now, base, {}).regressions(), 0);
}

TEST(Compare, SlowdownUnderTheThresholdOrWithinTheNoiseIsNot) {
  const json base = report({make_case(128, "naive", 100, 1, 100)});
  // 3% slower, well measured: under the 5% threshold.
  EXPECT_EQ(compare_reports(base, report({make_case(128, "naive", 103, 1, 100)}), {}).regressions(), 0);
  // ... but over a 2% threshold.
  CompareOptions two;
  two.threshold = 0.02;
  EXPECT_EQ(compare_reports(base, report({make_case(128, "naive", 103, 1, 100)}), two).regressions(), 1);
  // 10% slower, but 20 samples spread over 60%: rse ~ 1.2533*(60/1.349)/sqrt(30)/100 = 10% each.
  const json noisy_base = report({make_case(128, "naive", 100, 60, 30)});
  const json noisy_new = report({make_case(128, "naive", 110, 66, 30)});
  const CompareResult c = compare_reports(noisy_base, noisy_new, {});
  EXPECT_EQ(c.rows[0].verdict, Verdict::WithinNoise);
  EXPECT_GT(c.rows[0].noise, 0.1);
  EXPECT_EQ(c.regressions(), 0);
}

TEST(Compare, PassedToFailedIsARegressionEvenWhenFaster) {
  const json base = report({make_case(128, "naive", 100, 1, 100)});
  const json now = report({make_case(128, "naive", 50, 1, 100, "incorrect")});
  const CompareResult c = compare_reports(base, now, {});
  EXPECT_EQ(c.rows[0].verdict, Verdict::NowFails);
  EXPECT_EQ(c.regressions(), 1);
  EXPECT_EQ(compare_reports(now, base, {}).rows[0].verdict, Verdict::NowPasses);
  EXPECT_EQ(compare_reports(now, base, {}).regressions(), 0);
  // A case failing in both is not a new regression.
  EXPECT_EQ(compare_reports(now, now, {}).regressions(), 0);
}

TEST(Compare, MatchesByProblemAndKernelNotByOrder) {
  const json base = report({make_case(128, "naive", 100, 1, 100), make_case(128, "fast", 10, 0.1, 100)});
  const json now = report({make_case(128, "fast", 10, 0.1, 100), make_case(256, "naive", 500, 1, 100),
                           make_case(128, "naive", 100, 1, 100)});
  const CompareResult c = compare_reports(base, now, {});
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].kernel, "naive");
  EXPECT_EQ(c.rows[0].verdict, Verdict::Unchanged);
  EXPECT_EQ(c.rows[1].kernel, "fast");
  EXPECT_EQ(c.rows[1].verdict, Verdict::Unchanged);
  EXPECT_EQ(c.rows[2].verdict, Verdict::Added);
  EXPECT_EQ(c.regressions(), 0);
  const CompareResult back = compare_reports(now, base, {});
  int missing = 0;
  for (const auto& r : back.rows) missing += r.verdict == Verdict::Missing;
  EXPECT_EQ(missing, 1);
}

TEST(Compare, SchemaVersion1ReportsComputeTheirNoiseFromTheStats) {
  json v1 = report({make_case(128, "naive", 100, 1, 100)});
  v1["schema_version"] = 1;
  v1["cases"][0]["kernel_timing"].erase("mode");
  v1["cases"][0]["kernel_timing"]["l2_flushed"] = true;
  const json v2 = report({make_case(128, "naive", 120, 1, 100)});
  const CompareResult c = compare_reports(v1, v2, {});
  EXPECT_EQ(c.rows[0].verdict, Verdict::Slower);
  EXPECT_TRUE(c.rows[0].note.empty()) << c.rows[0].note;  // l2_flushed true reads as cold
}

TEST(Compare, InvalidReportsAreUsageErrorsNamingFileAndKey) {
  const json good = report({make_case(128, "naive", 100, 1, 100)});
  auto message = [&](const json& bad) -> std::string {
    try {
      compare_reports(good, bad, {}, "BASE.json", "NEW.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(json::array()), "NEW.json: not a JSON object; expected an nvfp4bench report");
  EXPECT_EQ(message(json{{"cases", json::array()}}),
            "NEW.json: schema_version: missing; expected an integer");
  EXPECT_EQ(message(json{{"schema_version", 9}, {"cases", json::array()}}),
            "NEW.json: schema_version 9: unsupported; expected 1 or 2");
  json no_m = good;
  no_m["cases"][0]["problem"].erase("m");
  EXPECT_EQ(message(no_m), "NEW.json: cases[0].problem.m: missing; expected an integer");
  json bad_median = good;
  bad_median["cases"][0]["kernel_timing"]["stats"]["median_us"] = "fast";
  EXPECT_EQ(message(bad_median),
            "NEW.json: cases[0].kernel_timing.stats.median_us: wrong type; expected a number");
}

TEST(Compare, MarkdownTableListsEveryRowAndTheCount) {
  const json base = report({make_case(128, "naive", 100, 1, 100)});
  const json now = report({make_case(128, "naive", 110, 1, 100)});
  const std::string md = compare_markdown(compare_reports(base, now, {}), {});
  EXPECT_NE(md.find("| 128x7168x16384 L=1 gpumode seed 0 | naive | 100.000 | 110.000 | +10.00% |"), std::string::npos) << md;
  EXPECT_NE(md.find("**SLOWER**"), std::string::npos) << md;
  EXPECT_NE(md.find("1 regression(s)"), std::string::npos) << md;
}

namespace {
json with_asked(json c, const char* asked) {
  c["kernel"]["asked"] = asked;
  return c;
}
}  // namespace

// A sweep case that asked for "auto" and failed before its kernel was
// resolved is recorded with kernel name "auto"; it must still meet its base case and regress.
TEST(Compare, AutoCaseThatFailsBeforeResolutionIsARegression) {
  const json base = report({with_asked(make_case(128, "naive", 100, 1, 100), "auto")});
  json failed = with_asked(make_case(128, "auto", 0, 0, 0, "error"), "auto");
  failed.erase("kernel_timing");
  const CompareResult c = compare_reports(base, report({failed}), {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::NowFails);
  EXPECT_EQ(c.regressions(), 1);
  // Unsupported or incorrect alike.
  failed["disposition"] = "not_supported";
  EXPECT_EQ(compare_reports(base, report({failed}), {}).regressions(), 1);
}

TEST(Compare, AskedAndResolvedKernelBothTakePartInTheMatch) {
  // auto resolving to another kernel is another case: the old one is missing (a regression,
  // since it passed), the new one added.
  const json base = report({with_asked(make_case(128, "naive", 100, 1, 100), "auto")});
  const json now = report({with_asked(make_case(128, "fast", 100, 1, 100), "auto")});
  const CompareResult c = compare_reports(base, now, {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::Missing);
  EXPECT_EQ(c.rows[0].kernel, "auto → naive");
  EXPECT_EQ(c.rows[1].verdict, Verdict::Added);
  EXPECT_EQ(c.regressions(), 1);
  // Asked explicitly vs through auto: not the same case either.
  const json expl = report({make_case(128, "naive", 100, 1, 100)});
  EXPECT_EQ(compare_reports(base, expl, {}).rows[0].verdict, Verdict::Missing);
}

TEST(Compare, APassedCaseMissingFromTheNewReportIsARegression) {
  const json base = report({make_case(128, "naive", 100, 1, 100), make_case(256, "naive", 50, 1, 100, "incorrect")});
  const CompareResult c = compare_reports(base, report({}), {});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_TRUE(c.rows[0].regression);   // passed, now gone
  EXPECT_FALSE(c.rows[1].regression);  // failed before already
  EXPECT_EQ(c.regressions(), 1);
}

TEST(Compare, APassedCaseWithAZeroOrNoMedianIsAnError) {
  const json good = report({make_case(128, "naive", 435, 1, 100)});
  auto message = [&](const json& bad) -> std::string {
    try {
      compare_reports(bad, good, {}, "BASE.json", "NEW.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(report({make_case(128, "naive", 0, 0, 100)})),
            "BASE.json: cases[0].kernel_timing.stats.median_us: 0; a passed case needs a median > 0");
  json untimed = make_case(128, "naive", 100, 1, 100);
  untimed.erase("kernel_timing");
  EXPECT_EQ(message(report({untimed})),
            "BASE.json: cases[0]: passed but has no kernel_timing with ran true; expected the kernel's median");
}

TEST(Compare, TooFewSamplesOnEitherSideAreNotComparable) {
  // One sample each (configs/smoke.json's iters: 1): IQR 0, so any change looked beyond noise.
  const json base = report({make_case(128, "naive", 100, 0, 1)});
  const json now = report({make_case(128, "naive", 150, 0, 1)});
  const CompareResult c = compare_reports(base, now, {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::NotComparable);
  EXPECT_FALSE(c.rows[0].regression);
  EXPECT_EQ(c.rows[0].samples, 1);
  EXPECT_NE(compare_markdown(c, {}).find("not comparable: 1 samples (at least 30 needed)"), std::string::npos);
  EXPECT_EQ(c.not_comparable(), 1);
  // Enough samples in the base, too few in the new report: still no verdict.
  const CompareResult mixed = compare_reports(report({make_case(128, "naive", 100, 0.1, 100)}),
                                              report({make_case(128, "naive", 150, 0, 2)}), {});
  EXPECT_EQ(mixed.rows[0].verdict, Verdict::NotComparable);
  EXPECT_EQ(mixed.rows[0].samples, 2);
  // A case that stops passing is a regression whatever its sample count.
  const CompareResult fails = compare_reports(base, report({make_case(128, "naive", 100, 0, 1, "incorrect")}), {});
  EXPECT_EQ(fails.rows[0].verdict, Verdict::NowFails);
  EXPECT_TRUE(fails.rows[0].regression);
  // Three samples (the host backend's old default) are not enough: one slow sample set the noise.
  const CompareResult three = compare_reports(report({make_case(128, "naive", 100, 0.1, 3)}),
                                              report({make_case(128, "naive", 150, 0.1, 3)}), {});
  EXPECT_EQ(three.rows[0].verdict, Verdict::NotComparable);
  // At the minimum the rule applies again.
  const CompareResult ten = compare_reports(report({make_case(128, "naive", 100, 0.1, 30)}),
                                            report({make_case(128, "naive", 150, 0.1, 30)}), {});
  EXPECT_EQ(ten.rows[0].verdict, Verdict::Slower);
}

TEST(Compare, TwoSeedsOfOneShapeAreToldApartInTheTable) {
  json a = make_case(128, "naive", 100, 1, 100), b = make_case(128, "naive", 200, 1, 100);
  b["problem"]["seed"] = uint64_t(1);
  const json r = report({a, b});
  const std::string md = compare_markdown(compare_reports(r, r, {}), {});
  EXPECT_NE(md.find("| 128x7168x16384 L=1 gpumode seed 0 | naive | 100.000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 128x7168x16384 L=1 gpumode seed 1 | naive | 200.000 |"), std::string::npos) << md;
}

namespace {

// A case whose stats are those of `samples`, kept in the report as --samples does.
json sampled_case(int64_t m, const std::vector<double>& samples) {
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  const double median = quantile_sorted(v, 0.5), q1 = quantile_sorted(v, 0.25), q3 = quantile_sorted(v, 0.75);
  json c = make_case(m, "naive", median, q3 - q1, int64_t(v.size()));
  auto& st = c["kernel_timing"]["stats"];
  st["q1_us"] = q1;
  st["q3_us"] = q3;
  st["rse_median"] = rse_median_of(int64_t(v.size()), median, q3 - q1);
  c["kernel_timing"]["attempts"] = int64_t(v.size());
  c["kernel_timing"]["samples_us"] = samples;
  return c;
}

std::string rejection(const json& bad) {
  try {
    compare_reports(report({make_case(128, "naive", 100, 1, 100)}), bad, {}, "BASE.json", "NEW.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(RankTest, ExactAndApproximatePValues) {
  // 5 against 5, fully separated: 2 of the C(10,5) = 252 arrangements are as extreme.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 2.0 / 252, 1e-12);
  EXPECT_NEAR(mann_whitney_p({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}), 2.0 / 252, 1e-12);
  // Interleaved: no evidence.
  EXPECT_GT(mann_whitney_p({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}), 0.5);
  // 4 against 4 can never reach 0.01: why compare needs more samples than that.
  EXPECT_GT(mann_whitney_p({1, 2, 3, 4}, {5, 6, 7, 8}), 0.01);
  // Ties take the normal approximation: U = 1 of 36 pairs, tie term 4 x (2^3 - 2) = 24, so
  // var = 36/12 x (13 - 24/132) = 38.45, z = (17 - 0.5)/6.201 = 2.661, p = erfc(z/sqrt 2) = 0.00737.
  EXPECT_NEAR(mann_whitney_p({1, 1, 2, 2, 3, 3}, {3, 4, 4, 5, 5, 6}), 0.00737, 1e-4);
  EXPECT_EQ(mann_whitney_p({}, {1}), 1.0);
  EXPECT_EQ(mann_whitney_p({2, 2}, {2, 2}), 1.0);
}

TEST(Compare, KeptSamplesAreComparedByTheirRanks) {
  std::vector<double> base, slow, same;
  for (int i = 0; i < 30; ++i) {
    base.push_back(100 + 3 * i);
    same.push_back(101 + 3 * i);
    slow.push_back(1.5 * (100 + 3 * i));
  }
  // One sample far out on a side (a busy machine) does not hide a 1.5x slowdown.
  slow[0] = 10;
  const CompareResult c = compare_reports(report({sampled_case(128, base)}), report({sampled_case(128, slow)}), {});
  EXPECT_EQ(c.rows[0].verdict, Verdict::Slower);
  ASSERT_TRUE(c.rows[0].p_value.has_value());
  EXPECT_LT(*c.rows[0].p_value, 1e-3);
  EXPECT_NE(compare_markdown(c, {}).find("| p "), std::string::npos) << compare_markdown(c, {});
  const CompareResult u = compare_reports(report({sampled_case(128, base)}), report({sampled_case(128, same)}), {});
  EXPECT_EQ(u.rows[0].verdict, Verdict::Unchanged);
  EXPECT_EQ(u.regressions(), 0);
}

TEST(Compare, StatisticsThatDisagreeWithOneAnotherAreInvalid) {
  json doctored = make_case(128, "naive", 1000, 1, 100);
  doctored["kernel_timing"]["stats"]["rse_median"] = 1e9;  // "within noise" whatever the change
  EXPECT_EQ(rejection(report({doctored})),
            "NEW.json: cases[0].kernel_timing.stats.rse_median: 1000000000; expected 9.29083e-05 "
            "(from count, median_us and iqr_us)");
  json negative = make_case(128, "naive", 100, 1, -7);
  EXPECT_EQ(rejection(report({negative})), "NEW.json: cases[0].kernel_timing.stats.count: -7; expected >= 0");
  json inflated = make_case(128, "naive", 100, 1, 1000000000);
  inflated["kernel_timing"]["attempts"] = 12;
  EXPECT_EQ(rejection(report({inflated})),
            "NEW.json: cases[0].kernel_timing.stats.count: 1000000000; expected at most the 12 "
            "attempts made (NEW.json: cases[0].kernel_timing.attempts)");
  json quartiles = make_case(128, "naive", 100, 1, 100);
  quartiles["kernel_timing"]["stats"]["q1_us"] = 99.0;
  quartiles["kernel_timing"]["stats"]["q3_us"] = 105.0;
  EXPECT_EQ(rejection(report({quartiles})),
            "NEW.json: cases[0].kernel_timing.stats.iqr_us: 1; expected q3_us - q1_us = 6");
  json few = sampled_case(128, {100, 101, 102, 103, 104, 105, 106, 107, 108, 109});
  few["kernel_timing"]["samples_us"].erase(0);
  EXPECT_EQ(rejection(report({few})),
            "NEW.json: cases[0].kernel_timing.samples_us: 9 values; expected stats.count = 10");
  json moved = sampled_case(128, {100, 101, 102, 103, 104, 105, 106, 107, 108, 109});
  moved["kernel_timing"]["samples_us"][9] = 90.0;
  EXPECT_EQ(rejection(report({moved})).substr(0, 60),
            "NEW.json: cases[0].kernel_timing.stats.median_us: 104.5; exp");
}

TEST(Compare, WithoutSamplesTheNoiseIsTheSpreadBelowTheMedian) {
  // 30 samples of which 8 were slowed 20x and more (time slices lost on a busy machine): the upper
  // quartile is one of them, so an IQR-based noise (~240 %) would call a 1.5x slowdown "within
  // noise". The spread below the median is the kernel's own.
  std::vector<double> base, slow;
  for (int i = 0; i < 30; ++i) base.push_back(i < 22 ? 100 + 0.3 * i : 2000 + 100 * i);
  for (double v : base) slow.push_back(1.5 * v);
  auto summary = [](const std::vector<double>& v) {
    json c = sampled_case(128, v);
    c["kernel_timing"].erase("samples_us");  // a report without --samples
    return c;
  };
  const json b = report({summary(base)});
  const CompareResult c = compare_reports(b, report({summary(slow)}), {});
  EXPECT_EQ(c.rows[0].verdict, Verdict::Slower);
  EXPECT_FALSE(c.rows[0].p_value.has_value());
  const double median = b["cases"][0]["kernel_timing"]["stats"]["median_us"].get<double>();
  const double q1 = b["cases"][0]["kernel_timing"]["stats"]["q1_us"].get<double>();
  const double iqr = b["cases"][0]["kernel_timing"]["stats"]["iqr_us"].get<double>();
  EXPECT_GT(3 * std::hypot(rse_median_of(30, median, iqr), rse_median_of(30, 1.5 * median, 1.5 * iqr)), 0.5);
  EXPECT_NEAR(c.rows[0].noise, std::sqrt(2.0) * rse_median_below_of(30, median, q1), 1e-12);
  EXPECT_LT(c.rows[0].noise, 0.02);
  // The same report twice, and a report against its re-run with one more slow sample: unchanged.
  EXPECT_EQ(compare_reports(b, b, {}).rows[0].verdict, Verdict::Unchanged);
  std::vector<double> rerun = base;
  rerun[21] = 5000;
  EXPECT_EQ(compare_reports(b, report({summary(rerun)}), {}).regressions(), 0);
}
