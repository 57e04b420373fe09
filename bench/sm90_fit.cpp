// Refits the sm90 cost models to reports of configuration timings (kernels/sm90/fit.hpp) and
// prints, per model, each coefficient shipped and refitted, the estimates' error with each, the
// choosers' picks against the fastest timed configuration with each, and the coefficients as the
// lines of kernels/sm90/heuristics.cpp to replace. With --choices FILE (the choices fixture,
// tests/fixtures/sm90-choices.txt) it also counts the fixture's lines whose picks the refit
// would change; --write-choices OUT writes FILE again with this build's picks (after the new
// coefficients are in heuristics.cpp and the fitter is rebuilt); --picks-sweep OUT writes a
// sweep config that times, on at most --picks-max lines at --sm-count SMs whose pick the refit
// changes (the fit's shapes first, then by the gain the refit claims), the pick before (case
// "before") and after ("after"), both pinned. Writes nothing else.
// --residuals lists each timing used with both estimates.
// Usage: sm90_fit [--within 1.5] [--sm-count 132] [--residuals] [--choices FILE [--write-choices OUT]
// [--picks-sweep OUT [--picks-max 40]]] [REPORT.json...] (docs/kernels.md, "Refitting the cost
// models"). Exit codes: 0 done, 2 bad usage or input (naming the file, key or line).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "kernels/sm90/fit.hpp"

#include <nlohmann/json.hpp>

namespace {

using namespace nvfp4;
using namespace nvfp4::sm90;

std::string coefficients_line(const ModelFit& f) {
  std::string out = "    {";
  for (size_t i = 0; i < f.terms.size(); ++i) out += fmt::format("{}{:.4f}", i ? ", " : "", f.terms[i].fitted);
  return out + "}";
}

std::string picks_line(const char* what, const PickCheck& p) {
  std::string out = fmt::format("  picks, {}: geomean {:.3f}x, worst {:.3f}x of the fastest timed", what,
                                p.geomean, p.worst);
  if (!p.worst_at.empty()) out += " (" + p.worst_at + ")";
  if (p.untimed) out += fmt::format("; {} of {} picks not timed", p.untimed, p.shapes);
  return out + "\n";
}

const char* held_text(const TermFit& t) {
  switch (t.why) {
    case TermFit::Held::Unused: return "  (held: no timing exercises it)";
    case TermFit::Held::Explained: return "  (held: the other terms explain it)";
    case TermFit::Held::Negative: return "  (held: it fitted negative)";
    case TermFit::Held::No: break;
  }
  return "";
}

void print_fit(const std::vector<Timed>& timings, const ModelFit& f, int sms, bool residuals) {
  const bool two = f.path == Path::TwoPhase;
  std::printf("%s model: %d timings within the bound of their shape's fastest, %d shapes\n",
              two ? "two-phase" : "fused", f.timings, f.shapes);
  std::printf("  %-28s %10s %10s %8s %8s\n", "term", "shipped", "refit", "change", "timings");
  for (const TermFit& t : f.terms)
    std::printf("  %-28s %10.4f %10.4f %+7.1f%% %8d%s\n", t.name.c_str(), t.shipped, t.fitted,
                t.shipped != 0 ? 100.0 * (t.fitted / t.shipped - 1.0) : 0.0, t.timings,
                held_text(t));
  std::printf("  estimate error, shipped: mean %.1f %%, worst %.1f %% (%s)\n", 100 * f.shipped_mean,
              100 * f.shipped_worst, f.shipped_worst_at.c_str());
  std::printf("  estimate error, refit:   mean %.1f %%, worst %.1f %% (%s)\n", 100 * f.fitted_mean,
              100 * f.fitted_worst, f.fitted_worst_at.c_str());
  std::fputs(picks_line("shipped", check_picks(timings, f.path, shipped_models(), sms)).c_str(), stdout);
  std::fputs(picks_line("refit  ", check_picks(timings, f.path, with_fit(shipped_models(), f), sms)).c_str(),
             stdout);
  if (!residuals) return;
  std::printf("  %-20s %-36s %10s %10s %8s %10s %8s\n", "shape", "configuration", "us", "shipped", "error",
              "refit", "error");
  for (const ModelFit::Residual& r : f.residuals)
    std::printf("  %-20s %-36s %10.2f %10.2f %+7.1f%% %10.2f %+7.1f%%\n", shape_name(r.timed.shape).c_str(),
                describe(r.timed.config).c_str(), r.timed.us, r.shipped_us, 100 * (r.shipped_us / r.timed.us - 1),
                r.fitted_us, 100 * (r.fitted_us / r.timed.us - 1));
}

struct ChoiceLine {
  std::string text;  // as read
  bool shape = false;
  Shape s;
  int sms = 0;
  std::string picks;  // from " | " on
};

std::vector<ChoiceLine> read_choices(const std::string& path) {
  std::istringstream in(read_input_file(path));
  std::vector<ChoiceLine> out;
  int no = 0;
  for (std::string line; std::getline(in, line);) {
    ChoiceLine c;
    c.text = line;
    try {
      c.shape = parse_choice_line(line, ++no, &c.s, &c.sms, &c.picks);
    } catch (const Error& e) {
      throw usage_error(path + ": " + e.what());
    }
    out.push_back(c);
  }
  return out;
}

// The fixture's lines whose picks models m change, and the first few of them.
void print_choice_changes(const std::vector<ChoiceLine>& lines, const std::string& path, const CostModels& m) {
  int shapes = 0, changed = 0;
  std::string first;
  for (const ChoiceLine& c : lines) {
    if (!c.shape) continue;
    ++shapes;
    const std::string now = choices_of(c.s, c.sms, m);
    if (now == c.picks) continue;
    if (++changed <= 10)
      first += fmt::format("  {}x{}x{} L={} at {} SMs:{} ->{}\n", c.s.m, c.s.n, c.s.k, c.s.l, c.sms, c.picks, now);
  }
  std::printf("%s: the refit changes the picks of %d of %d lines%s\n%s", path.c_str(), changed, shapes,
              changed > 10 ? " (the first 10:)" : "", first.c_str());
}

double estimate_us(const Shape& s, const Config& c, int sms, const CostModels& m) {
  return c.path == Path::TwoPhase ? estimate_two_phase_us(s, c.two_phase, sms, m) : estimate_fused_us(s, c.fused, sms, m);
}

// A sweep config: the lines (at `sms` SMs) whose auto pick models m change, each as the pick
// before and after, pinned, cold, adaptive samples, GPU MODE data. At most `most` shapes: first
// those of the timings given (the fit's shapes), then by the gain m claims, largest first.
std::string picks_sweep(const std::vector<ChoiceLine>& lines, const std::vector<Timed>& timings,
                        const std::string& from, const CostModels& m, int sms, int most) {
  struct Change {
    Shape s;
    std::string before, after;
    bool timed = false;
    double gain = 1.0;  // m's estimate of before / of after
  };
  std::vector<Change> changes;
  for (const ChoiceLine& c : lines) {
    if (!c.shape || c.sms != sms) continue;
    const Config now = choose_config(c.s, sms, Path::Auto, m);
    Change ch{c.s, c.picks.substr(3, c.picks.find(" | ", 3) - 3), describe(now)};  // " | AUTO | ..."
    Config before;
    if (ch.after == ch.before || !parse_config(ch.before, &before).empty()) continue;
    ch.gain = estimate_us(c.s, before, sms, m) / estimate_us(c.s, now, sms, m);
    for (const Timed& t : timings)
      ch.timed |= t.shape.m == c.s.m && t.shape.n == c.s.n && t.shape.k == c.s.k && t.shape.l == c.s.l;
    changes.push_back(ch);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.timed != y.timed ? x.timed : x.gain > y.gain;
  });
  if (static_cast<int>(changes.size()) > most) changes.resize(most);
  nlohmann::json cases = nlohmann::json::array();
  for (const Change& ch : changes) {
    const nlohmann::json shape = {{"m", ch.s.m}, {"n", ch.s.n}, {"k", ch.s.k}, {"l", ch.s.l}};
    cases.push_back({{"name", "before"}, {"shape", shape}, {"kernel_config", ch.before}});
    cases.push_back({{"name", "after"}, {"shape", shape}, {"kernel_config", ch.after}});
  }
  const nlohmann::json config = {
      {"name", "sm90-picks"},
      {"description", fmt::format("The sm90 auto picks a refit changes on {} at {} SMs (at most {} shapes: the "
                                  "fit's first, then by the gain the refit claims): case \"before\" the file's "
                                  "pick, \"after\" the refit's, both pinned",
                                  from, sms, most)},
      {"defaults",
       {{"kernels", {"sm90"}}, {"references", {"auto"}}, {"peers", nlohmann::json::array()},
        {"dists", {"gpumode"}}, {"seeds", {1}}, {"mode", "cold"}, {"iters", 0}}},
      {"cases", cases}};
  return config.dump(1) + "\n";
}

int run(int argc, char** argv) {
  CLI::App app{"Refit the sm90 kernel's cost models to reports of configuration timings (docs/kernels.md)"};
  std::vector<std::string> reports;
  std::string choices, write_choices, picks_out;
  int picks_max = 40;
  bool residuals = false;
  FitOptions o;
  app.add_option("reports", reports, "reports in the tool's JSON format (a sweep with kernel_config \"all\")");
  app.add_option("--choices", choices, "the choices fixture (tests/fixtures/sm90-choices.txt): count the lines "
                                       "whose picks the refit changes");
  app.add_option("--write-choices", write_choices, "write the --choices file again, each line with this build's "
                                                   "picks, to this new file")
      ->needs("--choices");
  app.add_option("--picks-sweep", picks_out, "write a sweep config timing the picks the refit changes on the "
                                             "--choices file, before and after, to this new file")
      ->needs("--choices");
  app.add_option("--picks-max", picks_max, "the --picks-sweep's most shapes")->check(CLI::Range(1, 10000));
  app.add_flag("--residuals", residuals, "print each timing used with both models' estimates");
  app.add_option("--within", o.within, "fit to the timings at most this many times their shape's fastest")
      ->check(CLI::Range(1.0, 100.0));
  CLI::Option* sm_opt = app.add_option("--sm-count", o.sm_count,
                                       "the SM count of the GPU the timings were taken on, where the reports "
                                       "name none (default 132; a report's device.sm_count is used otherwise)")
                           ->check(CLI::Range(1, 1024));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }
  if (reports.empty() && write_choices.empty())
    throw usage_error("reports: none given; expected the reports to fit to (or --choices FILE --write-choices OUT)");
  std::vector<ChoiceLine> lines;
  if (!choices.empty()) lines = read_choices(choices);
  if (!write_choices.empty()) {
    std::vector<NamedPath> inputs{{"--choices", choices}};
    for (const std::string& r : reports) inputs.emplace_back("REPORT", r);
    check_outputs_distinct({{"--write-choices", write_choices}}, inputs);
    check_output_file("--write-choices", write_choices);
    std::string text;
    for (const ChoiceLine& c : lines)
      text += (c.shape ? fmt::format("{} {} {} {} {}{}", c.s.m, c.s.n, c.s.k, c.s.l, c.sms, choices_of(c.s, c.sms))
                       : c.text) + "\n";
    write_text_file_atomic(write_choices, text);
    std::printf("%s: %s with this build's picks\n", write_choices.c_str(), choices.c_str());
    if (reports.empty()) return 0;
  }
  std::vector<Timed> timings;
  for (const std::string& path : reports) add_timings(parse_json_checked(read_input_file(path), path), path, timings);
  const int sms = timings_sm_count(timings, o.sm_count);
  if (sm_opt->count() > 0 && sms != o.sm_count)
    throw usage_error(fmt::format("--sm-count {}: the reports were taken on a GPU with {} SMs", o.sm_count, sms));
  o.sm_count = sms;
  const ModelFit fused = fit_model(timings, Path::Fused, o);
  const ModelFit two = fit_model(timings, Path::TwoPhase, o);
  if (fused.timings == 0 && two.timings == 0)
    throw usage_error("no sm90 configuration timings in " + fmt::format("{}", fmt::join(reports, ", ")) +
                      ": expected passed cases of sm90, sm90-fused or sm90-2phase with kernel.configuration "
                      "and kernel_timing.stats.median_us");
  for (const ModelFit* f : {&fused, &two})
    if (f->timings > 0) {
      print_fit(timings, *f, o.sm_count, residuals);
      std::printf("\n");
    }
  std::printf("kernels/sm90/heuristics.cpp, kShipped with these coefficients (a model without timings keeps "
              "its own):\n");
  std::printf("%s,\n%s\n", coefficients_line(fused).c_str(), coefficients_line(two).c_str());
  const CostModels refit = with_fit(with_fit(shipped_models(), fused), two);
  if (!lines.empty()) print_choice_changes(lines, choices, refit);
  if (!picks_out.empty()) {
    std::vector<NamedPath> inputs{{"--choices", choices}};
    for (const std::string& r : reports) inputs.emplace_back("REPORT", r);
    check_outputs_distinct({{"--picks-sweep", picks_out}}, inputs);
    check_output_file("--picks-sweep", picks_out);
    write_text_file_atomic(picks_out, picks_sweep(lines, timings, choices, refit, o.sm_count, picks_max));
    std::printf("%s: the sweep of the changed picks, before and after\n", picks_out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "sm90_fit: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sm90_fit: %s\n", e.what());
    return kExitRuntime;
  }
}
