#include "src/report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "src/core/error.hpp"
#include "src/measure/stats.hpp"
#include "src/report/rank_test.hpp"

namespace nvfp4 {

using nlohmann::json;

const char* verdict_text(Verdict v) {
  switch (v) {
    case Verdict::Slower: return "SLOWER";
    case Verdict::Faster: return "faster";
    case Verdict::Unchanged: return "unchanged";
    case Verdict::WithinNoise: return "within noise";
    case Verdict::NowFails: return "NOW FAILS";
    case Verdict::NowPasses: return "now passes";
    case Verdict::Missing: return "missing in new";
    case Verdict::Added: return "new case";
    case Verdict::NotComparable: return "not comparable";
  }
  return "unchanged";
}

int CompareResult::regressions() const {
  int n = 0;
  for (const auto& r : rows) n += r.regression ? 1 : 0;
  return n;
}

int CompareResult::not_comparable() const {
  int n = 0;
  for (const auto& r : rows) n += r.verdict == Verdict::NotComparable ? 1 : 0;
  return n;
}

namespace {

// Two numbers a report computed from one another agree to the digits JSON keeps.
bool agrees(double stored, double computed) {
  return std::fabs(stored - computed) <= 1e-6 * std::fabs(computed) + 1e-12;
}

// A timing's stats, checked for what compare trusts: the count against the attempts made, the
// quartiles against the median, the noise estimate against what it is computed from, and the
// samples (where kept) against all of them. A report that says a 10x slowdown is "within noise"
// by a doctored rse_median or count is an invalid report, not a verdict.
void read_timed_stats(const json& kt, const std::string& tw, ReportCase& rc) {
  using vt = json::value_t;
  const json& st = json_need(kt, "stats", vt::object, tw);
  const std::string sw = tw + ".stats";
  rc.timed = true;
  rc.count = json_need(st, "count", vt::number_integer, sw).get<int64_t>();
  rc.median_us = json_need(st, "median_us", vt::number_float, sw).get<double>();
  const double iqr = json_need(st, "iqr_us", vt::number_float, sw).get<double>();
  if (!(rc.median_us >= 0) || !std::isfinite(rc.median_us))
    throw usage_error(fmt::format("{}.median_us: {}; expected a time >= 0", sw, rc.median_us));
  if (rc.count < 0) throw usage_error(fmt::format("{}.count: {}; expected >= 0", sw, rc.count));
  if (!(iqr >= 0) || !std::isfinite(iqr))
    throw usage_error(fmt::format("{}.iqr_us: {}; expected a time >= 0", sw, iqr));
  if (const auto at = kt.find("attempts"); at != kt.end() && at->is_number_integer() &&
                                           rc.count > at->get<int64_t>())
    throw usage_error(fmt::format("{}.count: {}; expected at most the {} attempts made ({}.attempts)",
                                  sw, rc.count, at->get<int64_t>(), tw));
  const double computed = rse_median_of(rc.count, rc.median_us, iqr);
  rc.rse = computed;
  if (st.contains("q1_us") && st.contains("q3_us")) {
    const double q1 = json_need(st, "q1_us", vt::number_float, sw).get<double>();
    const double q3 = json_need(st, "q3_us", vt::number_float, sw).get<double>();
    if (!(q1 <= rc.median_us && rc.median_us <= q3) && !agrees(q1, rc.median_us) && !agrees(q3, rc.median_us))
      throw usage_error(fmt::format("{}.median_us: {}; expected it between q1_us {} and q3_us {}", sw,
                                    rc.median_us, q1, q3));
    if (!agrees(iqr, q3 - q1))
      throw usage_error(fmt::format("{}.iqr_us: {}; expected q3_us - q1_us = {}", sw, iqr, q3 - q1));
    // The gate's noise: the spread below the median (src/measure/stats.hpp says why).
    rc.rse = rse_median_below_of(rc.count, rc.median_us, q1);
  }
  // Version 2 stores the estimate; it must be the one its own count, median and IQR give.
  if (const auto r = st.find("rse_median"); r != st.end()) {
    const double stored = json_need(st, "rse_median", vt::number_float, sw).get<double>();
    if (!agrees(stored, computed))
      throw usage_error(fmt::format("{}.rse_median: {}; expected {:.6g} (from count, median_us and "
                                    "iqr_us)", sw, stored, computed));
  }
  const auto sj = kt.find("samples_us");
  if (sj == kt.end() || sj->is_null()) return;
  if (!sj->is_array())
    throw usage_error(fmt::format("{}.samples_us: wrong type; expected an array of times", tw));
  if (int64_t(sj->size()) != rc.count)
    throw usage_error(fmt::format("{}.samples_us: {} values; expected stats.count = {}", tw,
                                  sj->size(), rc.count));
  for (size_t i = 0; i < sj->size(); ++i) {
    const json& v = (*sj)[i];
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
      throw usage_error(fmt::format("{}.samples_us[{}]: {}; expected a time >= 0", tw, i, v.dump()));
    rc.samples.push_back(v.get<double>());
  }
  std::vector<double> sorted = rc.samples;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty() && !agrees(rc.median_us, quantile_sorted(sorted, 0.5)))
    throw usage_error(fmt::format("{}.median_us: {}; expected {} (the median of samples_us)", sw,
                                  rc.median_us, quantile_sorted(sorted, 0.5)));
}

}  // namespace

std::vector<ReportCase> read_report_cases(const json& rep, const std::string& what) {
  using vt = json::value_t;
  if (!rep.is_object()) throw usage_error(fmt::format("{}: not a JSON object; expected an nvfp4bench report", what));
  const std::string top = what + ": ";
  const int64_t version = json_need(rep, "schema_version", vt::number_integer, top).get<int64_t>();
  if (version < 1 || version > 2)
    throw usage_error(fmt::format("{}: schema_version {}: unsupported; expected 1 or 2", what, version));
  const json& cases = json_need(rep, "cases", vt::array, top);
  std::vector<ReportCase> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string where = fmt::format("{}: cases[{}]", what, i);
    const json& c = cases[i];
    if (!c.is_object()) throw usage_error(where + ": not an object");
    const json& p = json_need(c, "problem", vt::object, where);
    const std::string pw = where + ".problem";
    const int64_t m = json_need(p, "m", vt::number_integer, pw).get<int64_t>();
    const int64_t n = json_need(p, "n", vt::number_integer, pw).get<int64_t>();
    const int64_t k = json_need(p, "k", vt::number_integer, pw).get<int64_t>();
    const int64_t l = json_need(p, "l", vt::number_integer, pw).get<int64_t>();
    const std::string dist = json_need(p, "dist", vt::string, pw).get<std::string>();
    ReportCase rc;
    rc.problem = fmt::format("{}x{}x{} L={} {}", m, n, k, l, dist);
    const json& kj = json_need(c, "kernel", vt::object, where);
    rc.kernel = json_need(kj, "name", vt::string, where + ".kernel").get<std::string>();
    rc.asked = kj.contains("asked") ? json_need(kj, "asked", vt::string, where + ".kernel").get<std::string>()
                                    : rc.kernel;
    rc.problem_key = rc.problem;
    // Shown with its seed, so that two seeds of one shape are told apart; paired without it.
    if (const auto sd = p.find("seed"); sd != p.end() && sd->is_number_integer())
      rc.problem += sd->is_number_unsigned() ? fmt::format(" seed {}", sd->get<uint64_t>())
                                             : fmt::format(" seed {}", sd->get<int64_t>());
    rc.disposition = json_need(c, "disposition", vt::string, where).get<std::string>();
    if (const auto kt = c.find("kernel_timing"); kt != c.end() && kt->is_object() &&
                                                 kt->value("ran", false)) {
      const std::string tw = where + ".kernel_timing";
      read_timed_stats(*kt, tw, rc);
      rc.mode = kt->value("mode", kt->value("l2_flushed", true) ? "cold" : "hot");
    }
    // A passed case is compared by its median: one of 0 (or none) would read as "unchanged".
    if (rc.disposition == "passed" && !rc.timed)
      throw usage_error(fmt::format("{}: passed but has no kernel_timing with ran true; expected "
                                    "the kernel's median", where));
    if (rc.disposition == "passed" && !(rc.median_us > 0))
      throw usage_error(fmt::format("{}.kernel_timing.stats.median_us: {}; a passed case needs a "
                                    "median > 0", where, rc.median_us));
    out.push_back(std::move(rc));
  }
  return out;
}

CompareResult compare_reports(const json& base, const json& now, const CompareOptions& opt,
                              const std::string& base_name, const std::string& new_name) {
  const auto b = read_report_cases(base, base_name);
  const auto n = read_report_cases(now, new_name);
  CompareResult res;
  auto device_of = [](const json& r) {
    const json d = r.value("device", json::object());
    return d.value("name", std::string(r.value("backend", "") == "host" ? "host backend" : "unknown"));
  };
  if (device_of(base) != device_of(now))
    res.warnings.push_back(fmt::format("different devices: {} vs {}", device_of(base), device_of(now)));

  // Cases with the same key (problem, kernel asked for, kernel resolved) pair up in order (a
  // report may repeat a problem with other seeds). A base case left over then pairs with a new
  // case of the same problem and kernel asked for that never got its kernel resolved (a failure
  // before or during resolution: kernel.name is still what was asked).
  auto key_of = [](const ReportCase& c) { return c.problem_key + "\n" + c.asked + "\n" + c.kernel; };
  auto shown = [](const ReportCase& c) {
    return c.asked == c.kernel ? c.kernel : c.asked + " → " + c.kernel;
  };
  std::map<std::string, std::vector<const ReportCase*>> new_by_key;
  for (const auto& c : n) new_by_key[key_of(c)].push_back(&c);
  std::map<std::string, size_t> used;
  std::vector<std::pair<const ReportCase*, const ReportCase*>> pairs;  // base, new (or null)
  for (const auto& bc : b) {
    const std::string key = key_of(bc);
    auto& list = new_by_key[key];
    size_t& u = used[key];
    pairs.emplace_back(&bc, u < list.size() ? list[u++] : nullptr);
  }
  for (auto& [bc, nc] : pairs) {
    if (nc || bc->asked == bc->kernel) continue;
    const std::string key = bc->problem_key + "\n" + bc->asked + "\n" + bc->asked;
    auto& list = new_by_key[key];
    size_t& u = used[key];
    if (u < list.size()) nc = list[u++];
  }
  for (const auto& [bcp, ncp] : pairs) {
    const ReportCase& bc = *bcp;
    CompareRow row;
    row.problem = bc.problem;
    row.kernel = shown(bc);
    row.base_disposition = bc.disposition;
    if (bc.timed) row.base_us = bc.median_us;
    if (!ncp) {
      row.verdict = Verdict::Missing;
      row.regression = bc.disposition == "passed";  // passed before, not now
      res.rows.push_back(row);
      continue;
    }
    if (ncp->kernel != bc.kernel) row.kernel += " (not resolved in new)";
    const ReportCase& nc = *ncp;
    row.new_disposition = nc.disposition;
    if (nc.timed) row.new_us = nc.median_us;
    if (bc.timed && nc.timed && bc.mode != nc.mode)
      row.note = fmt::format("timing modes differ: {} vs {}", bc.mode, nc.mode);
    const bool was_ok = bc.disposition == "passed", is_ok = nc.disposition == "passed";
    if (was_ok && !is_ok) {
      row.verdict = Verdict::NowFails;
      row.regression = true;
    } else if (!was_ok && is_ok) {
      row.verdict = Verdict::NowPasses;
    }
    if (bc.timed && nc.timed && bc.median_us > 0) {
      row.change = nc.median_us / bc.median_us - 1.0;
      row.noise = std::hypot(bc.rse, nc.rse);
      if (row.verdict == Verdict::Unchanged && std::min(bc.count, nc.count) < opt.min_samples) {
        row.verdict = Verdict::NotComparable;
        row.samples = std::min(bc.count, nc.count);
      } else if (row.verdict == Verdict::Unchanged) {
        // The samples' own test where both kept them; else the medians' standard errors.
        bool beyond_noise;
        if (!bc.samples.empty() && !nc.samples.empty()) {
          row.p_value = mann_whitney_p(bc.samples, nc.samples);
          beyond_noise = *row.p_value < opt.alpha;
        } else {
          beyond_noise = std::fabs(row.change) > opt.noise_factor * row.noise;
        }
        if (std::fabs(row.change) <= opt.threshold) row.verdict = Verdict::Unchanged;
        else if (!beyond_noise) row.verdict = Verdict::WithinNoise;
        else if (row.change > 0) row.verdict = Verdict::Slower, row.regression = true;
        else row.verdict = Verdict::Faster;
      }
    }
    res.rows.push_back(row);
  }
  for (const auto& [key, list] : new_by_key)
    for (size_t i = used[key]; i < list.size(); ++i) {
      CompareRow row;
      row.problem = list[i]->problem;
      row.kernel = shown(*list[i]);
      row.new_disposition = list[i]->disposition;
      if (list[i]->timed) row.new_us = list[i]->median_us;
      row.verdict = Verdict::Added;
      res.rows.push_back(row);
    }
  return res;
}

std::string compare_markdown(const CompareResult& r, const CompareOptions& opt) {
  std::string out = fmt::format(
      "| problem | kernel | base (us) | new (us) | change | noise (±{:g}σ, or U test p) | verification | verdict |\n"
      "|---|---|---:|---:|---:|---:|---|---|\n",
      opt.noise_factor);
  auto us = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("-"); };
  for (const auto& row : r.rows) {
    const bool both = row.base_us && row.new_us;
    const std::string verification =
        row.base_disposition.empty() ? row.new_disposition
        : row.new_disposition.empty() ? row.base_disposition
        : row.base_disposition == row.new_disposition ? row.new_disposition
                                                      : row.base_disposition + " → " + row.new_disposition;
    std::string verdict = row.regression ? fmt::format("**{}**", verdict_text(row.verdict))
                                         : verdict_text(row.verdict);
    if (row.verdict == Verdict::NotComparable)
      verdict += fmt::format(": {} samples (at least {} needed)", row.samples, opt.min_samples);
    if (!row.note.empty()) verdict += " (" + row.note + ")";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", row.problem, row.kernel,
                       us(row.base_us), us(row.new_us),
                       both ? fmt::format("{:+.2f}%", 100.0 * row.change) : "-",
                       !both ? std::string("-")
                       : row.p_value ? fmt::format("p {:.2g}", *row.p_value)
                                     : fmt::format("±{:.2f}%", 100.0 * opt.noise_factor * row.noise),
                       verification, verdict);
  }
  for (const auto& w : r.warnings) out += "\nwarning: " + w + "\n";
  out += fmt::format("\n{} regression(s) (threshold {:g}%, noise factor {:g}, U test alpha {:g})\n",
                     r.regressions(), 100.0 * opt.threshold, opt.noise_factor, opt.alpha);
  if (const int nc = r.not_comparable())
    out += fmt::format("{} case(s) not comparable: fewer than {} samples on a side; no speed verdict "
                       "(a gate fails on it unless --allow-incomparable)\n", nc, opt.min_samples);
  return out;
}

}  // namespace nvfp4
