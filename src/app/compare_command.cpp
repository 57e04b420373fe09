// `nvfp4bench compare BASE.json NEW.json`: a Markdown table of per-case changes with their
// noise; exit 1 on a regression (slower beyond threshold and noise, or passed -> not passed),
// 2 on unreadable or invalid input, 4 when a case has too few samples for a speed verdict
// (unless --allow-incomparable), 0 otherwise. A gate never passes on what it could not judge.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "src/app/commands.hpp"
#include "src/case/number_options.hpp"
#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "src/report/compare.hpp"
#include "src/report/report_schema.hpp"

namespace nvfp4 {

namespace {

struct CompareArgs {
  std::string base, now, output;
  double threshold_pct = 5.0;
  bool allow_incomparable = false;
  CompareOptions opt;
};

int run_compare(CompareArgs& a) {
  if (!(a.threshold_pct >= 0))
    throw usage_error(fmt::format("--threshold {}: must be a percentage >= 0", a.threshold_pct));
  if (!(a.opt.noise_factor >= 0))
    throw usage_error(fmt::format("--noise-factor {}: must be >= 0", a.opt.noise_factor));
  if (!(a.opt.alpha > 0 && a.opt.alpha < 1))
    throw usage_error(fmt::format("--alpha {}: must be a probability in (0, 1)", a.opt.alpha));
  if (a.opt.min_samples < kMinSamplesFloor)
    throw usage_error(fmt::format("--min-samples {}: must be >= {} (fewer samples cannot show a "
                                  "slowdown beyond their noise)", a.opt.min_samples, kMinSamplesFloor));
  a.opt.threshold = a.threshold_pct / 100.0;
  check_output_file("--output", a.output);
  check_outputs_distinct({{"--output", a.output}}, {{"BASE", a.base}, {"NEW", a.now}});
  // Both files read before either is parsed, in order (an argument list's order is the
  // compiler's): a path that is no file is named before the other's contents are judged.
  const std::string base_text = read_input_file(a.base), now_text = read_input_file(a.now);
  const nlohmann::json base = parse_json_checked(base_text, a.base, "not valid JSON");
  const nlohmann::json now = parse_json_checked(now_text, a.now, "not valid JSON");
  check_report_schema(base, a.base);
  check_report_schema(now, a.now);
  const CompareResult r = compare_reports(base, now, a.opt, a.base, a.now);
  const std::string table = compare_markdown(r, a.opt);
  std::fputs(table.c_str(), stdout);
  if (!a.output.empty()) write_text_file_atomic(a.output, table);
  if (r.regressions() > 0) return kExitVerifyFailed;
  return r.not_comparable() > 0 && !a.allow_incomparable ? kExitNotComparable : kExitPass;
}

}  // namespace

Subcommand add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare two JSON reports case by case (same m,n,k,l,dist and kernel); exit 1 when a case "
      "got slower beyond both --threshold and its noise, or no longer passes verification");
  sub->footer(
      "Exit codes: 0 no regression; 1 a regression (slower beyond threshold and noise, or a "
      "case that passed in BASE did not pass in NEW, missing ones included); 2 bad usage, an "
      "unreadable or invalid report, or an output that would replace an input; 4 no regression "
      "but a case not comparable (fewer than --min-samples samples on a side; 0 with "
      "--allow-incomparable).");
  sub->add_option("base", args->base, "the baseline report (--json output)")->required();
  sub->add_option("new", args->now, "the report to check against it")->required();
  sub->add_option("--threshold", args->threshold_pct,
                  "slowdown in percent that counts as a regression")
      ->check(number_text())
      ->capture_default_str();
  sub->add_option("--noise-factor", args->opt.noise_factor,
                  "the slowdown must also exceed this many combined standard errors of the two "
                  "medians")
      ->check(number_text())
      ->capture_default_str();
  sub->add_option("--alpha", args->opt.alpha,
                  "where both reports kept their samples (--samples): the Mann-Whitney U test's "
                  "two-sided p-value must also be under this")
      ->check(number_text())
      ->capture_default_str();
  sub->add_option("--min-samples", args->opt.min_samples,
                  "fewer samples than this on either side: not comparable (exit 4)")
      ->check(integer_text<int64_t>())
      ->capture_default_str();
  sub->add_flag("--allow-incomparable", args->allow_incomparable,
                "exit 0, not 4, when the only finding is a case not comparable");
  sub->add_option("--output", args->output, "also write the Markdown table to this file");
  return {sub, [args](int, char**) { return run_compare(*args); }};
}

}  // namespace nvfp4
