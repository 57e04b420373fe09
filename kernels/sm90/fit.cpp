// The cost models' refit (fit.hpp).
#include "kernels/sm90/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <utility>

#include "src/core/error.hpp"
#include "src/core/json.hpp"

namespace nvfp4::sm90 {
namespace {

using nlohmann::json;

int64_t need_extent(const json& problem, const char* key, const std::string& where) {
  const int64_t v = json_need(problem, key, json::value_t::number_integer, where).get<int64_t>();
  if (v < 1) throw usage_error(fmt::format("{}.{}: {}; expected an integer >= 1", where, key, v));
  return v;
}

int path_terms(Path p) { return p == Path::TwoPhase ? kTwoPhaseTerms : kFusedTerms; }

std::vector<double> terms_of(const Timed& t, int sms) {
  if (t.config.path == Path::TwoPhase) {
    const TwoPhaseTerms a = two_phase_terms(t.shape, t.config.two_phase, sms);
    return {a.begin(), a.end()};
  }
  const FusedTerms a = fused_terms(t.shape, t.config.fused, sms);
  return {a.begin(), a.end()};
}

std::vector<double> coefficients_of(const CostModels& m, Path p) {
  if (p == Path::TwoPhase) return {m.two_phase.begin(), m.two_phase.end()};
  return {m.fused.begin(), m.fused.end()};
}

double estimate(const std::vector<double>& terms, const std::vector<double>& k) {
  double sum = 0.0;
  for (size_t i = 0; i < terms.size(); ++i) sum += terms[i] * k[i];
  return sum;
}

std::string name_of(const Timed& t) { return shape_name(t.shape) + " " + describe(t.config); }

// The timings of path `p`, by shape (in shape order: the printed fit does not depend on the
// report's case order).
using ByShape = std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::vector<const Timed*>>;
ByShape by_shape(const std::vector<Timed>& timings, Path p) {
  ByShape out;
  for (const Timed& t : timings)
    if (t.config.path == p) out[{t.shape.m, t.shape.n, t.shape.k, t.shape.l}].push_back(&t);
  return out;
}

// Solves the symmetric system a x = b for the unknowns `free` (Gaussian elimination with partial
// pivoting on column-scaled equations). Returns the index of an unknown the system cannot
// determine (a pivot below 1e-10 of its column's scale), or -1 when solved.
int solve(std::vector<std::vector<double>> a, std::vector<double> b, const std::vector<int>& free,
          std::vector<double>& x) {
  const size_t n = free.size();
  std::vector<double> scale(n, 1.0);
  for (size_t i = 0; i < n; ++i) scale[i] = std::sqrt(a[i][i]) > 0 ? 1.0 / std::sqrt(a[i][i]) : 1.0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) a[i][j] *= scale[i] * scale[j];
    b[i] *= scale[i];
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;  // which unknown each column is
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (std::fabs(a[p][c]) < 1e-10) return free[c];
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double q = a[r][c] / a[c][c];
      if (q == 0.0) continue;
      for (size_t j = c; j < n; ++j) a[r][j] -= q * a[c][j];
      b[r] -= q * b[c];
    }
  }
  x.assign(n, 0.0);
  for (size_t i = 0; i < n; ++i) x[i] = b[i] / a[i][i] * scale[i];
  return -1;
}

}  // namespace

std::string shape_name(const Shape& s) {
  std::string out = fmt::format("{}x{}x{}", s.m, s.n, s.k);
  if (s.l != 1) out += fmt::format("x{}", s.l);
  return out;
}

void add_timings(const json& report, const std::string& what, std::vector<Timed>& out) {
  if (!report.is_object() || !report.contains("cases") || !report.at("cases").is_array())
    throw usage_error(fmt::format("{}: cases: missing; expected an array of cases", what));
  using Key = std::pair<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::string>;
  const auto key_of = [](const Timed& t) {
    return Key{std::make_tuple(t.shape.m, t.shape.n, t.shape.k, t.shape.l), describe(t.config)};
  };
  std::map<Key, size_t> seen;
  for (size_t i = 0; i < out.size(); ++i) seen.emplace(key_of(out[i]), i);
  int sms = 0;
  if (const auto d = report.find("device"); d != report.end() && d->is_object() && d->contains("sm_count")) {
    const json& v = d->at("sm_count");
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 100000)
      throw usage_error(fmt::format("{}: device.sm_count: {}; expected an integer >= 1", what, v.dump()));
    sms = static_cast<int>(v.get<int64_t>());
  }
  const json& cases = report.at("cases");
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = fmt::format("{}: cases[{}]", what, i);
    if (c.is_object() && c.contains("disposition") && c.at("disposition") != "passed") continue;
    const json& kernel = json_need(c, "kernel", json::value_t::object, where);
    const auto name = kernel.find("name");
    if (name == kernel.end() || !name->is_string() ||
        (*name != "sm90" && *name != "sm90-fused" && *name != "sm90-2phase"))
      continue;
    if (!kernel.contains("configuration") || !kernel.at("configuration").is_string()) continue;
    Timed t;
    if (!parse_config(kernel.at("configuration").get<std::string>(), &t.config).empty()) continue;
    const json& p = json_need(c, "problem", json::value_t::object, where);
    const std::string pw = where + ".problem";
    t.shape = Shape{need_extent(p, "m", pw), need_extent(p, "n", pw), need_extent(p, "k", pw),
                    p.contains("l") ? need_extent(p, "l", pw) : 1};
    // Named, not temporaries: a reference returned by json_need must not look bound to one
    // (GCC 14's -Wdangling-reference).
    const std::string tw = where + ".kernel_timing", sw = tw + ".stats";
    const json& timing = json_need(c, "kernel_timing", json::value_t::object, where);
    const json& stats = json_need(timing, "stats", json::value_t::object, tw);
    const json& median = json_need(stats, "median_us", json::value_t::number_float, sw);
    t.us = median.get<double>();
    t.sm_count = sms;
    if (!(t.us > 0) || !std::isfinite(t.us))
      throw usage_error(fmt::format("{}.kernel_timing.stats.median_us: {}; expected a number > 0", where,
                                    median.dump()));
    const auto [it, fresh] = seen.emplace(key_of(t), out.size());
    if (fresh) {
      out.push_back(t);
    } else {
      out[it->second].us = std::min(out[it->second].us, t.us);
    }
  }
}

int timings_sm_count(const std::vector<Timed>& timings, int fallback) {
  int sms = 0;
  for (const Timed& t : timings) {
    if (t.sm_count == 0 || t.sm_count == sms) continue;
    if (sms != 0)
      throw usage_error(fmt::format("timings from GPUs with {} and {} SMs: fit one GPU's at a time", sms,
                                    t.sm_count));
    sms = t.sm_count;
  }
  return sms != 0 ? sms : fallback;
}

ModelFit fit_model(const std::vector<Timed>& timings, Path path, const FitOptions& o) {
  ModelFit f;
  f.path = path;
  const int n = path_terms(path);
  const std::vector<double> shipped = coefficients_of(shipped_models(), path);
  f.terms.resize(n);
  for (int i = 0; i < n; ++i) {
    f.terms[i].name = path == Path::TwoPhase ? two_phase_term_name(i) : fused_term_name(i);
    f.terms[i].shipped = f.terms[i].fitted = shipped[i];
  }
  std::vector<std::pair<std::vector<double>, const Timed*>> used;
  for (const auto& [key, list] : by_shape(timings, path)) {
    double fastest = 1e300;
    for (const Timed* t : list) fastest = std::min(fastest, t->us);
    ++f.shapes;
    for (const Timed* t : list)
      if (t->us <= o.within * fastest) used.emplace_back(terms_of(*t, t->sm_count > 0 ? t->sm_count : o.sm_count), t);
  }
  f.timings = static_cast<int>(used.size());
  for (const auto& [terms, t] : used)
    for (int i = 0; i < n; ++i) f.terms[i].timings += terms[i] != 0.0;
  // Relative least squares: minimise the sum of ((terms . k - us) / us)^2 over the free terms,
  // the held ones' share taken from the time first. A term no timing exercises is held; so is
  // one the others explain (its column a combination of theirs over these timings), and one
  // that comes out negative (no count costs negative time: the timings do not pin it down), the
  // most negative first, until every free term is >= 0.
  std::vector<bool> held(n);
  for (int i = 0; i < n; ++i) {
    held[i] = f.terms[i].timings == 0;
    if (held[i]) f.terms[i].why = TermFit::Held::Unused;
  }
  for (;;) {
    std::vector<int> free;
    for (int i = 0; i < n; ++i)
      if (!held[i]) free.push_back(i);
    if (free.empty()) break;
    std::vector<std::vector<double>> a(free.size(), std::vector<double>(free.size(), 0.0));
    std::vector<double> b(free.size(), 0.0);
    for (const auto& [terms, t] : used) {
      double rest = t->us;
      for (int i = 0; i < n; ++i)
        if (held[i]) rest -= terms[i] * shipped[i];
      const double w = 1.0 / (t->us * t->us);
      for (size_t r = 0; r < free.size(); ++r) {
        b[r] += w * terms[free[r]] * rest;
        for (size_t c = 0; c < free.size(); ++c) a[r][c] += w * terms[free[r]] * terms[free[c]];
      }
    }
    std::vector<double> x;
    const int stuck = solve(a, b, free, x);
    if (stuck >= 0) {
      held[stuck] = true;
      f.terms[stuck].why = TermFit::Held::Explained;
      continue;
    }
    size_t worst = 0;
    for (size_t r = 1; r < free.size(); ++r)
      if (x[r] < x[worst]) worst = r;
    if (x[worst] < 0.0) {
      held[free[worst]] = true;
      f.terms[free[worst]].why = TermFit::Held::Negative;
      continue;
    }
    for (size_t r = 0; r < free.size(); ++r) f.terms[free[r]].fitted = x[r];
    break;
  }
  for (int i = 0; i < n; ++i) f.terms[i].held = held[i];
  std::vector<double> fitted(n);
  for (int i = 0; i < n; ++i) fitted[i] = f.terms[i].fitted;
  double sum_shipped = 0, sum_fitted = 0;
  for (const auto& [terms, t] : used) {
    f.residuals.push_back({*t, estimate(terms, shipped), estimate(terms, fitted)});
    const double es = std::fabs(f.residuals.back().shipped_us / t->us - 1.0);
    const double ef = std::fabs(f.residuals.back().fitted_us / t->us - 1.0);
    sum_shipped += es;
    sum_fitted += ef;
    if (es > f.shipped_worst) {
      f.shipped_worst = es;
      f.shipped_worst_at = name_of(*t);
    }
    if (ef > f.fitted_worst) {
      f.fitted_worst = ef;
      f.fitted_worst_at = name_of(*t);
    }
  }
  if (!used.empty()) {
    f.shipped_mean = sum_shipped / double(used.size());
    f.fitted_mean = sum_fitted / double(used.size());
  }
  return f;
}

CostModels with_fit(const CostModels& base, const ModelFit& fit) {
  CostModels m = base;
  for (size_t i = 0; i < fit.terms.size(); ++i) {
    if (fit.path == Path::TwoPhase) {
      m.two_phase[i] = fit.terms[i].fitted;
    } else {
      m.fused[i] = fit.terms[i].fitted;
    }
  }
  return m;
}

PickCheck check_picks(const std::vector<Timed>& timings, Path path, const CostModels& m, int sms) {
  PickCheck pc;
  double log_sum = 0.0;
  int ranked = 0;
  for (const auto& [key, list] : by_shape(timings, path)) {
    ++pc.shapes;
    const Shape s = list.front()->shape;
    // The fastest of what the chooser may take (a timing of a configuration it no longer weighs
    // is no standard for it).
    const Timed* fastest = nullptr;
    bool stream_k = false, two_per_sm = false;
    for (const Timed* t : list) {
      if (!configuration_error(s, path, t->config, sms).empty()) continue;
      if (!fastest || t->us < fastest->us) fastest = t;
      stream_k |= t->config.path == Path::Fused && t->config.fused.workers > 0;
      two_per_sm |= t->config.path == Path::Fused && t->config.fused.per_sm == 2;
    }
    if (!fastest) {
      ++pc.untimed;
      continue;
    }
    Config pick;
    pick.path = path;
    if (path == Path::TwoPhase) {
      pick.two_phase = choose_two_phase(s, sms, m);
    } else {
      // The chooser over what was timed: stream-K and two CTAs per SM where the timings hold them.
      pick.fused = stream_k || two_per_sm ? choose_fused(s, sms, m, two_per_sm) : choose_fused_split_k(s, sms, m);
    }
    const std::string name = describe(pick);
    const Timed* timed = nullptr;
    for (const Timed* t : list)
      if (describe(t->config) == name) timed = t;
    if (!timed) {
      ++pc.untimed;
      continue;
    }
    const double r = timed->us / fastest->us;
    log_sum += std::log(r);
    ++ranked;
    if (r > pc.worst) {
      pc.worst = r;
      pc.worst_at = fmt::format("{}: {} ({:.2f} us, fastest {} {:.2f} us)", shape_name(s), name, timed->us,
                                describe(fastest->config), fastest->us);
    }
  }
  if (ranked > 0) pc.geomean = std::exp(log_sum / ranked);
  return pc;
}

std::string choices_of(const Shape& s, int sms, const CostModels& m) {
  return " | " + describe(choose_config(s, sms, Path::Auto, m)) + " | " + describe(choose_config(s, sms, Path::Fused, m)) +
         " | " + describe(choose_config(s, sms, Path::TwoPhase, m));
}

bool parse_choice_line(const std::string& line, int line_no, Shape* s, int* sms, std::string* picks) {
  if (line.empty() || line[0] == '#') return false;
  std::istringstream f(line);
  long long v[5];
  for (long long& x : v)
    if (!(f >> x) || x < 1)
      throw usage_error(fmt::format("line {}: \"{}\": expected \"m n k l sms | auto | fused | two-phase\"", line_no, line));
  *s = Shape{v[0], v[1], v[2], v[3]};
  *sms = static_cast<int>(v[4]);
  std::getline(f, *picks);
  return true;
}

}  // namespace nvfp4::sm90
