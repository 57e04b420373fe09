#include "src/sweep/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <sstream>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "src/core/text.hpp"
#include "src/measure/measure.hpp"
#include "src/problem/problem.hpp"
#include "src/registry/registry.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

namespace {

// The keys a defaults object or a case may set (besides a case's own keys).
const std::vector<std::string> kSettingKeys = {
    "kernels", "references", "peers", "dists", "seeds",         "warmup",    "warmup_time",
    "iters",   "flush",      "mode",  "rtol",  "atol",          "verify_sample", "timeout_s",
    "kernel_config"};

// The timing modes of the single-run --mode (src/measure/measure.hpp).

std::string type_word(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "an object";
}

std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// A refusal is one line: control characters from the config (a key "a\nb") are shown escaped
// (found by fuzz_sweep_config).
std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

// Parses with the file name and JSON path in every message.
class Parser {
 public:
  explicit Parser(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw usage_error(
        printable(fmt::format("{}: {}: {}", where_, path.empty() ? "(top level)" : path, what)));
  }
  [[noreturn]] void type_error(const std::string& path, const char* expected, const json& v) const {
    fail(path, fmt::format("expected {}, got {} {}", expected, type_word(v), shown(v)));
  }

  void object(const json& v, const std::string& path) const {
    if (!v.is_object()) type_error(path, "an object", v);
  }
  void known_keys(const json& v, const std::string& path,
                  const std::vector<std::string>& allowed) const {
    for (const auto& [key, _] : v.items())
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(sub(path, key), fmt::format("unknown key (expected one of: {})", join(allowed)));
  }
  static std::string sub(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string& path, size_t i) {
    return fmt::format("{}[{}]", path, i);
  }

  // T: int64_t for sizes and counts; uint64_t for seeds, whose range is --seed's (0 to 2^64-1).
  template <class T = int64_t>
  T integer(const json& v, const std::string& path, int64_t min) const {
    if (!v.is_number_integer()) type_error(path, min > 0 ? "a positive integer" : "an integer", v);
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > uint64_t(std::numeric_limits<T>::max()))
        fail(path, fmt::format("{} is too large (at most {})", shown(v), std::numeric_limits<T>::max()));
      if (min > 0 && u < uint64_t(min))
        fail(path, fmt::format("{} is out of range: must be >= {}", u, min));
      return T(u);
    }
    const int64_t x = v.get<int64_t>();
    if (x < min) fail(path, fmt::format("{} is out of range: must be >= {}", x, min));
    return T(x);
  }
  double number(const json& v, const std::string& path, double min, bool min_open) const {
    if (!v.is_number()) type_error(path, "a number", v);
    const double x = v.get<double>();
    if (min_open ? !(x > min) : !(x >= min))
      fail(path,
           fmt::format("{} is out of range: must be {} {}", shown(v), min_open ? ">" : ">=", min));
    return x;
  }
  bool boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) type_error(path, "true or false", v);
    return v.get<bool>();
  }
  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string() || v.get<std::string>().empty()) type_error(path, "a non-empty string", v);
    return v.get<std::string>();
  }
  std::vector<std::string> strings(const json& v, const std::string& path) const {
    if (!v.is_array() || v.empty()) type_error(path, "a non-empty list of strings", v);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], at(path, i)));
    return out;
  }

  // An axis: an integer, a non-empty list of integers, or {"from", "to", "step"|"times"}.
  template <class T = int64_t>
  std::vector<T> axis(const json& v, const std::string& path, int64_t min) const {
    if (v.is_number_integer()) return {integer<T>(v, path, min)};
    if (v.is_array()) {
      if (v.empty()) fail(path, "empty list: expected at least one value");
      std::vector<T> out;
      for (size_t i = 0; i < v.size(); ++i) out.push_back(integer<T>(v[i], at(path, i), min));
      return out;
    }
    if (!v.is_object())
      type_error(path, "an integer, a list of integers or {\"from\", \"to\", \"step\"|\"times\"}",
                 v);
    known_keys(v, path, {"from", "to", "step", "times"});
    for (const char* k : {"from", "to"})
      if (!v.contains(k)) fail(sub(path, k), "missing (a range needs from and to)");
    const T from = integer<T>(v["from"], sub(path, "from"), min);
    const T to = integer<T>(v["to"], sub(path, "to"), min);
    if (to < from) fail(sub(path, "to"), fmt::format("{} is below from ({})", to, from));
    const bool step = v.contains("step"), times = v.contains("times");
    if (step == times)
      fail(path, "a range needs exactly one of step (arithmetic) or times (geometric)");
    std::vector<T> out;
    if (step) {
      const T s = integer<T>(v["step"], sub(path, "step"), 1);
      for (T x = from; x <= to; x += s) {
        out.push_back(x);
        if (int64_t(out.size()) > kMaxCases)
          fail(path, fmt::format("more than {} values", kMaxCases));
        if (x > std::numeric_limits<T>::max() - s) break;
      }
    } else {
      const T f = integer<T>(v["times"], sub(path, "times"), 2);
      if (from == 0) fail(sub(path, "from"), "a geometric range cannot start at 0");
      for (T x = from; x <= to; x *= f) {
        out.push_back(x);
        if (x > std::numeric_limits<T>::max() / f) break;
      }
    }
    return out;
  }

  // Applies the setting keys present in `v` on top of `base`.
  struct Settings {
    std::vector<std::string> kernels{"auto"}, references{"auto"}, dists{"gpumode"}, peers;
    std::vector<uint64_t> seeds{0};
    std::optional<int> warmup, iters;
    std::optional<double> warmup_time;  // seconds
    std::optional<bool> flush;
    std::optional<std::string> mode;
    std::optional<double> rtol, atol, timeout_s;
    std::optional<int64_t> verify_sample;
    std::optional<std::string> kernel_config;  // one configuration, or "all"
  };
  Settings settings(const json& v, const std::string& path, Settings s) const {
    auto has = [&](const char* k) { return v.contains(k); };
    auto p = [&](const char* k) { return sub(path, k); };
    if (has("kernels")) s.kernels = known_names(v["kernels"], p("kernels"), Role::Kernel);
    if (has("references")) s.references = known_names(v["references"], p("references"), Role::Reference);
    if (has("dists")) {
      s.dists = strings(v["dists"], p("dists"));
      for (size_t i = 0; i < s.dists.size(); ++i)
        if (!parse_dist(s.dists[i]))
          fail(at(p("dists"), i),
               fmt::format("'{}' is not a distribution (expected gpumode or normal)", s.dists[i]));
    }
    if (has("peers")) {
      const json& pv = v["peers"];
      if (pv.is_string() && pv.get<std::string>() == "all") {
        s.peers = {"all"};
      } else if (pv.is_array()) {
        s.peers.clear();  // [] means none (overrides the defaults)
        for (size_t i = 0; i < pv.size(); ++i) s.peers.push_back(string(pv[i], at(p("peers"), i)));
      } else {
        type_error(p("peers"), "a list of peer names or \"all\"", pv);
      }
    }
    if (has("seeds")) s.seeds = axis<uint64_t>(v["seeds"], p("seeds"), 0);
    if (has("warmup"))
      s.warmup = int(std::min<int64_t>(integer(v["warmup"], p("warmup"), 0), 1000000));
    if (has("warmup_time")) s.warmup_time = number(v["warmup_time"], p("warmup_time"), 0, false);
    if (has("iters"))  // 0: adaptive sampling
      s.iters = int(std::min<int64_t>(integer(v["iters"], p("iters"), 0), 1000000));
    if (has("flush")) s.flush = boolean(v["flush"], p("flush"));
    if (has("mode")) {
      s.mode = string(v["mode"], p("mode"));
      if (!parse_mode(*s.mode))
        fail(p("mode"), fmt::format("'{}' is not a timing mode (expected one of: {})", *s.mode, mode_list()));
    }
    if (has("rtol")) s.rtol = number(v["rtol"], p("rtol"), 0, false);
    if (has("atol")) s.atol = number(v["atol"], p("atol"), 0, false);
    if (has("verify_sample")) s.verify_sample = integer(v["verify_sample"], p("verify_sample"), 0);
    if (has("timeout_s")) s.timeout_s = number(v["timeout_s"], p("timeout_s"), 0, true);
    if (has("kernel_config")) s.kernel_config = string(v["kernel_config"], p("kernel_config"));
    // flush and mode both say whether L2 is flushed: refused here when they disagree, not
    // failed in every case with flags the user never typed.
    if (s.flush && s.mode && (*s.flush != (*s.mode != "hot")))
      fail(has("mode") ? p("mode") : p("flush"),
           fmt::format("mode '{}' conflicts with flush: {} ({}); give one of them", *s.mode,
                       *s.flush ? "true" : "false",
                       *s.flush ? "hot is the mode without a flush" : "no flush is mode hot"));
    return s;
  }

  // Names of registered implementations of `role` (or auto): a config naming an unknown one is
  // refused at parse time, at the name's path.
  std::vector<std::string> known_names(const json& v, const std::string& path, Role role) const {
    std::vector<std::string> names = strings(v, path);
    const std::vector<std::string> known = names_of(role);
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] != "auto" && std::find(known.begin(), known.end(), names[i]) == known.end())
        fail(at(path, i), fmt::format("'{}' is not a {}; expected auto or one of: {}{}", names[i],
                                      role == Role::Kernel ? "kernel" : "reference", join(known),
                                      role == Role::Kernel ? " (plugins and Python kernels: load "
                                                             "them with --kernel-lib / --kernel-py "
                                                             "before the subcommand)" : ""));
    return names;
  }

 private:
  std::string where_;
};

// The top level apart from the cases: name, description, notes; returns the defaults.
Parser::Settings parse_top_level(const Parser& p, const json& j, SweepConfig& c) {
  p.object(j, "");
  p.known_keys(j, "", {"$schema", "name", "description", "notes", "defaults", "cases"});
  if (j.contains("name")) c.name = p.string(j["name"], "name");
  if (j.contains("description")) c.description = p.string(j["description"], "description");
  if (j.contains("notes") && !j["notes"].is_string()) (void)p.strings(j["notes"], "notes");
  Parser::Settings defaults;
  if (j.contains("defaults")) {
    p.object(j["defaults"], "defaults");
    p.known_keys(j["defaults"], "defaults", kSettingKeys);
    defaults = p.settings(j["defaults"], "defaults", defaults);
  }
  return defaults;
}

const json& cases_list(const Parser& p, const json& j) {
  if (!j.contains("cases")) p.fail("cases", "missing: a sweep needs a non-empty list of cases");
  const json& cases = j["cases"];
  if (!cases.is_array()) p.type_error("cases", "a non-empty list of cases", cases);
  if (cases.empty()) p.fail("cases", "empty: a sweep needs at least one case");
  return cases;
}

// The values of m, n, k and l of a case entry: one each from its shape, or lists from its axes.
std::array<std::vector<int64_t>, 4> case_dims(const Parser& p, const json& e,
                                              const std::string& path) {
  const bool has_shape = e.contains("shape"), has_axes = e.contains("axes");
  if (has_shape == has_axes)
    p.fail(path, "a case needs exactly one of shape ({\"m\", \"n\", \"k\", \"l\"}) or axes");
  const std::string spath = Parser::sub(path, has_shape ? "shape" : "axes");
  const json& sv = e[has_shape ? "shape" : "axes"];
  p.object(sv, spath);
  p.known_keys(sv, spath, {"m", "n", "k", "l"});
  std::array<std::vector<int64_t>, 4> dims;
  const char* names[4] = {"m", "n", "k", "l"};
  for (int d = 0; d < 4; ++d) {
    const std::string dpath = Parser::sub(spath, names[d]);
    if (!sv.contains(names[d])) {
      if (d == 3) {
        dims[d] = {1};
        continue;
      }  // L defaults to 1
      p.fail(dpath, "missing");
    }
    dims[d] = has_shape ? std::vector<int64_t>{p.integer(sv[names[d]], dpath, 1)}
                        : p.axis(sv[names[d]], dpath, 1);
    if (d == 2)  // whole scale blocks, or the case is not an NVFP4 problem at all
      for (int64_t k : dims[d])
        if (k % 16 != 0)
          p.fail(dpath,
                 fmt::format("{} is not a multiple of 16 (one E4M3 scale per 16 elements)", k));
  }
  return dims;
}

SweepCase make_case(int64_t index, const std::string& name, const Shape& shape,
                    const std::string& kern, const std::string& config, const std::string& ref,
                    const std::string& dist, uint64_t seed, const Parser::Settings& s) {
  SweepCase sc;
  sc.kernel_config = config;
  sc.index = index;
  sc.name = name;
  sc.shape = shape;
  sc.kernel = kern;
  sc.reference = ref;
  sc.dist = dist;
  sc.seed = seed;
  sc.peers = s.peers;
  sc.warmup = s.warmup;
  sc.warmup_time = s.warmup_time;
  sc.iters = s.iters;
  sc.flush = s.flush;
  sc.mode = s.mode;
  sc.rtol = s.rtol;
  sc.atol = s.atol;
  sc.verify_sample = s.verify_sample;
  sc.timeout_s = s.timeout_s;
  return sc;
}

// The kernel configurations a case of `kern` at `shape` runs: none pinned, the one named, or
// with "all" every one the kernel lists for the shape (asked of the kernel here, so the cases and
// the config hash say which ran). A shape the kernel refuses keeps one case, refused when run.
std::vector<std::string> kernel_configs(const Parser& p, const std::string& path,
                                        const std::string& kern, const Shape& shape,
                                        const Parser::Settings& s) {
  if (!s.kernel_config) return {""};
  if (*s.kernel_config != "all") return {*s.kernel_config};
  const std::string kpath = Parser::sub(path, "kernel_config");
  if (kern == "auto")
    p.fail(kpath, "\"all\" needs named kernels (which kernel auto picks depends on the machine); "
                  "name them in kernels");
  const std::unique_ptr<Gemm> g = make_gemm(kern, Role::Kernel);
  if (!g)
    p.fail(kpath, fmt::format("\"all\": '{}' is not a kernel known here (built in, or loaded with "
                              "--kernel-lib before the subcommand)", kern));
  if (!g->shape_error(shape).empty()) return {""};
  std::vector<std::string> configs = g->configurations(shape);
  if (configs.empty())
    p.fail(kpath, fmt::format("\"all\": kernel '{}' lists no configurations for {}x{}x{} L={}", kern,
                              shape.m, shape.n, shape.k, shape.l));
  return configs;
}

// Every combination of the entry's dims and settings, appended to `out` (refused past kMaxCases).
void expand_case(const Parser& p, const std::string& path, const std::string& name,
                 const std::array<std::vector<int64_t>, 4>& dims, const Parser::Settings& s,
                 std::vector<SweepCase>& out) {
  const double count = double(dims[0].size()) * double(dims[1].size()) * double(dims[2].size()) *
                       double(dims[3].size()) * double(s.kernels.size()) *
                       double(s.references.size()) * double(s.dists.size()) *
                       double(s.seeds.size());
  if (double(out.size()) + count > double(kMaxCases))
    p.fail(path, fmt::format("the config expands to more than {} cases", kMaxCases));
  // Order: m, n, k, l, kernel, its configuration, reference, dist, seed (the last varies fastest).
  for (int64_t m : dims[0])
    for (int64_t n : dims[1])
      for (int64_t k : dims[2])
        for (int64_t l : dims[3])
          for (const auto& kern : s.kernels)
            for (const auto& config : kernel_configs(p, path, kern, {m, n, k, l}, s))
              for (const auto& ref : s.references)
                for (const auto& dist : s.dists)
                  for (uint64_t seed : s.seeds) {
                    if (int64_t(out.size()) >= kMaxCases)  // "all" can multiply the count above
                      p.fail(path, fmt::format("the config expands to more than {} cases", kMaxCases));
                    out.push_back(make_case(int64_t(out.size()), name, {m, n, k, l}, kern, config,
                                            ref, dist, seed, s));
                  }
}

// One entry of "cases": checked, then expanded into `out`.
void parse_case_entry(const Parser& p, const json& e, const std::string& path,
                      const Parser::Settings& defaults, std::vector<SweepCase>& out) {
  std::vector<std::string> case_keys = {"name", "shape", "axes", "notes", "source"};
  case_keys.insert(case_keys.end(), kSettingKeys.begin(), kSettingKeys.end());
  p.object(e, path);
  p.known_keys(e, path, case_keys);
  for (const char* k : {"notes", "source"})
    if (e.contains(k) && !e[k].is_string()) (void)p.strings(e[k], Parser::sub(path, k));
  const std::string name = e.contains("name") ? p.string(e["name"], Parser::sub(path, "name")) : "";
  const auto dims = case_dims(p, e, path);
  const Parser::Settings s = p.settings(e, path, defaults);
  expand_case(p, path, name, dims, s, out);
}

}  // namespace

SweepConfig parse_config(const json& j, const std::string& where) {
  Parser p(where);
  SweepConfig c;
  c.path = where;
  const Parser::Settings defaults = parse_top_level(p, j, c);
  const json& cases = cases_list(p, j);
  for (size_t ci = 0; ci < cases.size(); ++ci)
    parse_case_entry(p, cases[ci], Parser::at("cases", ci), defaults, c.cases);
  c.hash = config_hash(c.cases);
  return c;
}

SweepConfig parse_config_text(const std::string& text, const std::string& where) {
  // Syntax errors, numbers beyond double (found by fuzz_sweep_config), nesting deeper than
  // kMaxJsonDepth (70000 levels crashed the tool) and a key given twice: one line each.
  return parse_config(parse_json_checked(text, where), where);
}


SweepConfig load_config(const std::string& path) { return parse_config_text(read_input_file(path), path); }

SweepConfig load_config(const std::string& path, const std::vector<std::string>& kernels) {
  json j = parse_json_checked(read_input_file(path), path);
  // Only where the config has the expected form; otherwise parse_config reports what is wrong.
  if (j.is_object() && (!j.contains("defaults") || j["defaults"].is_object())) {
    j["defaults"]["kernels"] = kernels;
    if (j.contains("cases") && j["cases"].is_array())
      for (json& c : j["cases"])
        if (c.is_object()) c.erase("kernels");
  }
  return parse_config(j, path);
}

}  // namespace nvfp4::sweep
