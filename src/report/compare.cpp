#include "src/report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "src/core/error.hpp"
#include "src/measure/stats.hpp"

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
      const json& st = json_need(*kt, "stats", vt::object, tw);
      const std::string sw = tw + ".stats";
      rc.timed = true;
      rc.count = json_need(st, "count", vt::number_integer, sw).get<int64_t>();
      rc.median_us = json_need(st, "median_us", vt::number_float, sw).get<double>();
      const double iqr = json_need(st, "iqr_us", vt::number_float, sw).get<double>();
      // Version 2 stores the estimate; version 1 reports carry what it is computed from.
      rc.rse = st.contains("rse_median") && st["rse_median"].is_number()
                   ? st["rse_median"].get<double>()
                   : rse_median_of(rc.count, rc.median_us, iqr);
      if (!(rc.median_us >= 0) || !std::isfinite(rc.median_us))
        throw usage_error(fmt::format("{}.median_us: {}; expected a time >= 0", sw, rc.median_us));
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
        const bool beyond_noise = std::fabs(row.change) > opt.noise_factor * row.noise;
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
      "| problem | kernel | base (us) | new (us) | change | noise (±{:g}σ) | verification | verdict |\n"
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
                       both ? fmt::format("±{:.2f}%", 100.0 * opt.noise_factor * row.noise) : "-",
                       verification, verdict);
  }
  for (const auto& w : r.warnings) out += "\nwarning: " + w + "\n";
  out += fmt::format("\n{} regression(s) (threshold {:g}%, noise factor {:g})\n", r.regressions(),
                     100.0 * opt.threshold, opt.noise_factor);
  return out;
}

}  // namespace nvfp4
