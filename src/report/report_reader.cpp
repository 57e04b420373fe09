#include "src/report/report_reader.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "src/report/compare.hpp"
#include "src/report/report_schema.hpp"
#include "src/report/writer.hpp"

namespace nvfp4 {

using nlohmann::json;
using vt = json::value_t;

namespace {

std::string sub(const std::string& where, const std::string& key) {
  return where + (!where.empty() && where.back() == ' ' ? "" : ".") + key;
}

// j[key] type-checked when present and not null, else nullptr: an absent key (or a null one,
// how the json writer spells "unknown") leaves the model's field at its absent value.
const json* opt(const json& j, const char* key, vt type, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &json_need(j, key, type, where);
}
double num(const json& j, const char* key, const std::string& w, double def = 0) {
  const json* v = opt(j, key, vt::number_float, w);
  return v ? v->get<double>() : def;
}
int64_t integer(const json& j, const char* key, const std::string& w, int64_t def = 0) {
  const json* v = opt(j, key, vt::number_integer, w);
  return v ? v->get<int64_t>() : def;
}
std::string text(const json& j, const char* key, const std::string& w) {
  const json* v = opt(j, key, vt::string, w);
  return v ? v->get<std::string>() : std::string();
}
bool flag(const json& j, const char* key, const std::string& w, bool def = false) {
  const json* v = opt(j, key, vt::boolean, w);
  return v ? v->get<bool>() : def;
}

Stats read_stats(const json& s, const std::string& w) {
  Stats st;
  st.count = json_need(s, "count", vt::number_integer, w).get<int64_t>();
  st.median = json_need(s, "median_us", vt::number_float, w).get<double>();
  st.mean = num(s, "mean_us", w);
  st.min = num(s, "min_us", w);
  st.max = num(s, "max_us", w);
  st.stdev = num(s, "stdev_us", w);
  st.q1 = num(s, "q1_us", w);
  st.q3 = num(s, "q3_us", w);
  // Version 1 stored no interval: [min, max] is what it is for very few samples, and wider.
  st.median_ci_lo = num(s, "median_ci_lo_us", w, st.min);
  st.median_ci_hi = num(s, "median_ci_hi_us", w, st.max);
  return st;
}

TimingResult read_timing(const json& t, const std::string& w) {
  if (!t.is_object()) throw usage_error(fmt::format("{}: not an object; expected a timing", w));
  TimingResult r;
  r.name = json_need(t, "name", vt::string, w).get<std::string>();
  r.role = json_need(t, "role", vt::string, w).get<std::string>();
  r.ran = json_need(t, "ran", vt::boolean, w).get<bool>();
  if (!r.ran) {
    r.reason = text(t, "reason", w);
    return r;
  }
  r.same_numerics = flag(t, "same_numerics", w, true);
  Measurement& m = r.measurement;
  m.timer = text(t, "timer", w);
  const std::string mode = text(t, "mode", w);
  if (mode.empty()) {
    m.mode = flag(t, "l2_flushed", w, true) ? MeasureMode::Cold : MeasureMode::Hot;  // version 1
  } else if (const auto pm = parse_mode(mode)) {
    m.mode = *pm;
  } else {
    throw usage_error(fmt::format("{}: '{}': not a timing mode; expected one of: {}", sub(w, "mode"),
                                  mode, mode_list()));
  }
  m.l2_flushed = flag(t, "l2_flushed", w);
  m.stop_reason = text(t, "stop_reason", w);
  m.attempts = integer(t, "attempts", w);
  m.warmup_runs = int(integer(t, "warmup_runs", w));
  m.warmup_s = num(t, "warmup_s", w);
  m.sampling_s = num(t, "sampling_s", w);
  m.stats = read_stats(json_need(t, "stats", vt::object, w), sub(w, "stats"));
  if (const json* h = opt(t, "host_us_per_call", vt::object, w))
    m.host_call = read_stats(*h, sub(w, "host_us_per_call"));
  m.stream_held = flag(t, "stream_held", w);
  if (const json* c = opt(t, "clock", vt::object, w)) {
    const std::string cw = sub(w, "clock");
    m.clock.source = text(*c, "source", cw);
    m.clock.read = integer(*c, "read", cw);
    m.clock.dropped_low_clock = integer(*c, "dropped_low_clock", cw);
    m.clock.min_mhz = num(*c, "min_mhz", cw);
    m.clock.median_mhz = num(*c, "median_mhz", cw);
    m.clock.max_mhz = num(*c, "max_mhz", cw);
    m.clock.policy.default_mhz = num(*c, "default_mhz", cw);
    m.clock.policy.min_fraction = num(*c, "min_fraction", cw, m.clock.policy.min_fraction);
  }
  r.tflops = num(t, "tflops", w);
  r.gbps = num(t, "gbps", w);
  r.kernel_speedup = num(t, "kernel_speedup", w);
  r.clock_ratio = num(t, "clock_ratio", w);
  if (const json* v = opt(t, "sol_us", vt::number_float, w)) r.sol_us = v->get<double>();
  if (const json* v = opt(t, "sol_fraction", vt::number_float, w)) r.sol_fraction = v->get<double>();
  r.sol_basis = text(t, "sol_basis", w);
  return r;
}

// got/expected are numbers, or strings where not finite ("nan", "inf": json_writer.cpp).
double number_or_text(const json& j, const char* key, const std::string& w) {
  const auto it = j.find(key);
  if (it != j.end() && it->is_string()) return std::strtod(it->get<std::string>().c_str(), nullptr);
  return num(j, key, w);
}

VerifyResult read_verification(const json& v, const std::string& w) {
  VerifyResult r;
  r.mode = text(v, "mode", w);
  r.checked = integer(v, "checked", w);
  r.mismatches = integer(v, "mismatches", w);
  r.unwritten = integer(v, "unwritten", w);
  r.max_abs_err = num(v, "max_abs_err", w);
  r.max_rel_err = num(v, "max_rel_err", w);
  // passed() is checked > 0 && no mismatch: a report that says otherwise is not this model's.
  if (const json* p = opt(v, "passed", vt::boolean, w); p && p->get<bool>() != r.passed())
    throw usage_error(fmt::format("{}: {} with {} checked and {} mismatches; expected passed to "
                                  "be checked > 0 and no mismatch", sub(w, "passed"), p->dump(),
                                  r.checked, r.mismatches));
  if (const json* first = opt(v, "first_mismatches", vt::array, w))
    for (size_t i = 0; i < first->size(); ++i) {
      const json& f = (*first)[i];
      const std::string fw = fmt::format("{}.first_mismatches[{}]", w, i);
      if (!f.is_object()) throw usage_error(fw + ": not an object");
      Mismatch m;
      m.at = {integer(f, "l", fw), integer(f, "i", fw), integer(f, "j", fw)};
      m.got = number_or_text(f, "got", fw);
      m.expected = number_or_text(f, "expected", fw);
      m.unwritten = flag(f, "unwritten", fw);
      r.first.push_back(m);
    }
  return r;
}

VerdictChecks read_verdict(const json& v, const std::string& w) {
  VerdictChecks r;
  if (const json* t = opt(v, "timed_outputs", vt::object, w)) {
    const std::string tw = sub(w, "timed_outputs");
    r.timed.done = flag(*t, "done", tw);
    r.timed.samples = integer(*t, "samples", tw);
    r.timed.outputs = integer(*t, "outputs", tw);
    r.timed.slots = int(integer(*t, "slots", tw, 1));
    r.timed.coords = integer(*t, "elements_per_output", tw);
    r.timed.elements = integer(*t, "elements", tw);
    r.timed.failure = text(*t, "failure", tw);
    r.timed.every_call = flag(*t, "every_call", tw);
    r.timed.runs = integer(*t, "runs", tw);
    if (const json* s = opt(*t, "secret_seed", vt::number_integer, tw)) r.timed.secret_seed = s->get<uint64_t>();
    if (r.timed.done && !flag(*t, "passed", tw, true) && r.timed.failure.empty())
      r.timed.failure = "a timed output was wrong";
  }
  if (const json* i = opt(v, "isolation", vt::object, w)) {
    const std::string iw = sub(w, "isolation");
    IsolationCheck& is = r.isolation;
    is.done = flag(*i, "done", iw);
    is.holds = int(integer(*i, "holds", iw));
    is.holds_timed_out = int(integer(*i, "holds_timed_out", iw));
    is.max_start_skew_us = num(*i, "max_start_skew_us", iw);
    is.max_gap_us = num(*i, "max_gap_us", iw);
    is.failure = text(*i, "failure", iw);
    if (const json* a = opt(*i, "stream_audit", vt::object, iw)) {
      const std::string aw = sub(iw, "stream_audit");
      is.audited = true;
      is.audit_records = integer(*a, "records", aw);
      is.audit_windows = integer(*a, "windows", aw);
      is.audit_outside = integer(*a, "outside", aw);
    }
    if (!flag(*i, "passed", iw, true) && is.failure.empty()) is.failure = "work outside the timed stream";
  }
  if (const json* c = opt(v, "recheck", vt::object, w)) {
    const std::string cw = sub(w, "recheck");
    r.recheck.done = flag(*c, "done", cw);
    if (const json* s = opt(*c, "seed", vt::number_integer, cw)) r.recheck.seed = s->get<uint64_t>();
    r.recheck.against = text(*c, "against", cw);
    if (const json* rv = opt(*c, "verification", vt::object, cw))
      r.recheck.result = read_verification(*rv, sub(cw, "verification"));
  }
  if (const json* f = opt(v, "floor", vt::object, w)) {
    const std::string fw = sub(w, "floor");
    Floor& fl = r.floor;
    fl.known = flag(*f, "known", fw);
    fl.reason = text(*f, "reason", fw);
    fl.floor_s = num(*f, "floor_us", fw) * 1e-6;
    fl.compute_s = num(*f, "compute_us", fw) * 1e-6;
    fl.memory_s = num(*f, "memory_us", fw) * 1e-6;
    fl.memory_counted = flag(*f, "memory_counted", fw);
    fl.tflops = num(*f, "tflops", fw);
    fl.bandwidth_tbs = num(*f, "bandwidth_tbs", fw);
    fl.basis = text(*f, "basis", fw);
    r.floor_failure = text(*f, "failure", fw);
    if (fl.known && !flag(*f, "passed", fw, true) && r.floor_failure.empty())
      r.floor_failure = "timed below the physical floor";
  }
  return r;
}

SolResult read_sol(const json& s, const std::string& w) {
  SolResult r;
  r.known = flag(s, "known", w);
  r.gpu = text(s, "gpu", w);
  r.reason = text(s, "reason", w);
  r.bytes = num(s, "bytes", w);
  r.flops = num(s, "flops", w);
  r.memory_s = num(s, "memory_us", w) * 1e-6;
  r.compute_s = num(s, "compute_us", w) * 1e-6;
  r.sol_s = num(s, "sol_us", w) * 1e-6;
  r.memory_bound = text(s, "bound", w) == "memory";
  r.compute_format = text(s, "compute_format", w);
  r.bandwidth_tbs = num(s, "bandwidth_tbs", w);
  r.tflops = num(s, "tflops", w);
  r.compute_basis = text(s, "basis", w);
  return r;
}

Disposition read_disposition(const json& c, const std::string& w) {
  const std::string d = json_need(c, "disposition", vt::string, w).get<std::string>();
  for (Disposition x : {Disposition::Passed, Disposition::Incorrect, Disposition::NotSupported,
                        Disposition::Error})
    if (d == disposition_name(x)) return x;
  throw usage_error(fmt::format("{}: '{}': unknown; expected passed, incorrect, not_supported or "
                                "error", sub(w, "disposition"), d));
}

CaseResult read_case(const json& c, const std::string& w) {
  CaseResult r;
  const json& p = json_need(c, "problem", vt::object, w);
  const std::string pw = sub(w, "problem");
  r.problem.shape = {integer(p, "m", pw), integer(p, "n", pw), integer(p, "k", pw),
                     integer(p, "l", pw, 1)};
  const std::string dist = json_need(p, "dist", vt::string, pw).get<std::string>();
  const auto d = parse_dist(dist);
  if (!d)
    throw usage_error(fmt::format("{}: '{}': unknown; expected gpumode or normal", sub(pw, "dist"), dist));
  r.problem.dist = *d;
  if (const json* s = opt(p, "seed", vt::number_integer, pw)) r.problem.seed = s->get<uint64_t>();
  if (const json* b = opt(p, "bytes", vt::object, pw)) {
    const std::string bw = sub(pw, "bytes");
    r.bytes.a = integer(*b, "a", bw);
    r.bytes.b = integer(*b, "b", bw);
    r.bytes.sfa_blocked = integer(*b, "sfa_blocked", bw);
    r.bytes.sfb_blocked = integer(*b, "sfb_blocked", bw);
    r.bytes.c = integer(*b, "c", bw);
  }
  const json& k = json_need(c, "kernel", vt::object, w);
  const std::string kw = sub(w, "kernel");
  r.kernel = json_need(k, "name", vt::string, kw).get<std::string>();
  r.kernel_asked = text(k, "asked", kw);
  r.kernel_description = text(k, "description", kw);
  r.kernel_configuration = text(k, "configuration", kw);
  if (const json* ref = opt(c, "reference", vt::object, w)) {
    r.reference = text(*ref, "name", sub(w, "reference"));
    r.reference_description = text(*ref, "description", sub(w, "reference"));
  }
  r.disposition = read_disposition(c, w);
  r.message = text(c, "message", w);
  if (const json* t = opt(c, "tolerance", vt::object, w)) {
    r.tolerance.rtol = num(*t, "rtol", sub(w, "tolerance"), r.tolerance.rtol);
    r.tolerance.atol = num(*t, "atol", sub(w, "tolerance"), r.tolerance.atol);
  }
  if (const json* v = opt(c, "verification", vt::object, w))
    r.verification = read_verification(*v, sub(w, "verification"));
  if (const json* e = opt(c, "exact_check", vt::object, w)) {
    const std::string ew = sub(w, "exact_check");
    r.exact_kernel = read_verification(json_need(*e, "kernel", vt::object, ew), sub(ew, "kernel"));
    r.exact_reference =
        read_verification(json_need(*e, "reference", vt::object, ew), sub(ew, "reference"));
  }
  if (const json* t = opt(c, "kernel_timing", vt::object, w))
    r.kernel_timing = read_timing(*t, sub(w, "kernel_timing"));
  if (const json* t = opt(c, "reference_timing", vt::object, w))
    r.reference_timing = read_timing(*t, sub(w, "reference_timing"));
  if (const json* peers = opt(c, "peers", vt::array, w))
    for (size_t i = 0; i < peers->size(); ++i)
      r.peers.push_back(read_timing((*peers)[i], fmt::format("{}.peers[{}]", w, i)));
  if (const json* notes = opt(c, "notes", vt::array, w))
    for (size_t i = 0; i < notes->size(); ++i) {
      if (!(*notes)[i].is_string())
        throw usage_error(fmt::format("{}.notes[{}]: wrong type; expected a string", w, i));
      r.notes.push_back((*notes)[i].get<std::string>());
    }
  if (const json* s = opt(c, "speed_of_light", vt::object, w))
    r.speed_of_light = read_sol(*s, sub(w, "speed_of_light"));
  if (const json* v = opt(c, "verdict", vt::object, w)) r.verdict = read_verdict(*v, sub(w, "verdict"));
  return r;
}

RunInfo read_info(const json& j, const std::string& top) {
  RunInfo info;
  if (const json* argv = opt(j, "argv", vt::array, top)) {
    info.argv.clear();
    for (const json& a : *argv) info.argv.push_back(a.is_string() ? a.get<std::string>() : a.dump());
  }
  if (const json* t = opt(j, "tool", vt::object, top)) {
    const std::string tw = top + "tool";
    info.version = text(*t, "version", tw);
    info.git_revision = text(*t, "git_revision", tw);
    info.build_type = text(*t, "build_type", tw);
    info.compiler = text(*t, "compiler", tw);
  }
  info.hostname = text(j, "hostname", top);
  info.utc_time = text(j, "utc_time", top);
  info.backend = text(j, "backend", top);
  if (const json* d = opt(j, "device", vt::object, top)) {
    const std::string dw = top + "device";
    DeviceInfo& dev = info.device;
    dev.has_gpu = flag(*d, "has_gpu", dw);
    dev.name = text(*d, "name", dw);
    dev.no_gpu_reason = text(*d, "no_gpu_reason", dw);
    dev.sm_count = int(integer(*d, "sm_count", dw));
    const std::string cc = text(*d, "compute_capability", dw);
    if (const auto dot = cc.find('.'); dot != std::string::npos) {
      dev.cc_major = int(std::strtol(cc.substr(0, dot).c_str(), nullptr, 10));
      dev.cc_minor = int(std::strtol(cc.substr(dot + 1).c_str(), nullptr, 10));
    }
  }
  if (const json* m = opt(j, "measurement", vt::object, top)) {
    const std::string mode = text(*m, "mode", top + "measurement");
    if (const auto pm = parse_mode(mode)) info.measure.mode = *pm;
    info.clock_source = text(*m, "clock_source", top + "measurement");
  }
  if (const json* s = opt(j, "seed", vt::number_integer, top)) info.seed = s->get<uint64_t>();
  return info;
}

}  // namespace

json read_report_file(const std::string& path) {
  json j = parse_json_checked(read_input_file(path), path, "not valid JSON");
  check_report_schema(j, path);
  return j;
}

ReadReport read_report(const json& j, const std::string& what) {
  (void)read_report_cases(j, what);  // compare's checks first: one rule for what a report is
  ReadReport r;
  const std::string top = what + ": ";
  r.info = read_info(j, top);
  const json& cases = json_need(j, "cases", vt::array, top);
  for (size_t i = 0; i < cases.size(); ++i)
    r.cases.push_back(read_case(cases[i], fmt::format("{}: cases[{}]", what, i)));
  return r;
}

std::string render_report(const json& j, const std::string& what, const std::string& format) {
  const std::unique_ptr<ReportWriter> writer = writer_for("--format", format);
  const ReadReport r = read_report(j, what);
  return format == "json" ? j.dump(2) + "\n" : writer->render(r.info, r.cases, false);
}

}  // namespace nvfp4
