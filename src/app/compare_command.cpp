// `nvfp4bench compare BASE.json NEW.json`: a Markdown table of per-case changes with their
// noise; exit 1 on a regression (slower beyond threshold and noise, or passed -> not passed),
// 2 on unreadable or invalid input, 0 otherwise.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "src/app/commands.hpp"
#include "src/case/number_options.hpp"
#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "src/report/compare.hpp"

namespace nvfp4 {

namespace {

struct CompareArgs {
  std::string base, now, output;
  double threshold_pct = 5.0;
  CompareOptions opt;
};

int run_compare(CompareArgs& a) {
  if (!(a.threshold_pct >= 0))
    throw usage_error(fmt::format("--threshold {}: must be a percentage >= 0", a.threshold_pct));
  if (!(a.opt.noise_factor >= 0))
    throw usage_error(fmt::format("--noise-factor {}: must be >= 0", a.opt.noise_factor));
  a.opt.threshold = a.threshold_pct / 100.0;
  check_output_file("--output", a.output);
  check_outputs_distinct({{"--output", a.output}}, {{"BASE", a.base}, {"NEW", a.now}});
  // Both files read before either is parsed, in order (an argument list's order is the
  // compiler's): a path that is no file is named before the other's contents are judged.
  const std::string base_text = read_input_file(a.base), now_text = read_input_file(a.now);
  const CompareResult r = compare_reports(parse_json_checked(base_text, a.base, "not valid JSON"),
                                          parse_json_checked(now_text, a.now, "not valid JSON"),
                                          a.opt, a.base, a.now);
  const std::string table = compare_markdown(r, a.opt);
  std::fputs(table.c_str(), stdout);
  if (!a.output.empty()) write_text_file_atomic(a.output, table);
  return r.regressions() > 0 ? kExitVerifyFailed : kExitPass;
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
      "unreadable or invalid report, or an output that would replace an input.");
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
  sub->add_option("--output", args->output, "also write the Markdown table to this file");
  return {sub, [args](int, char**) { return run_compare(*args); }};
}

}  // namespace nvfp4
