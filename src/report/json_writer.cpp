#include "src/report/json_writer.hpp"

#include <fmt/format.h>

#include <cmath>

#include "src/report/writer.hpp"

namespace nvfp4 {

using nlohmann::json;

json to_json(const RunInfo& r) {
  const DeviceInfo& d = r.device;
  json dev = {{"has_gpu", d.has_gpu},
              {"cuda_runtime_version", d.runtime_version},
              {"cuda_driver_version", d.driver_version}};
  // Absent where cuBLASLt was not loaded: a host run never loads it.
  if (d.cublaslt_version) dev["cublaslt_version"] = d.cublaslt_version;
  if (d.has_gpu) {
    dev.update({{"ordinal", d.ordinal},
                {"name", d.name},
                {"compute_capability", d.cc_string()},
                {"sm_count", d.sm_count},
                {"l2_bytes", d.l2_bytes},
                {"global_memory_bytes", d.global_mem_bytes},
                {"sm_clock_khz", d.clock_khz},
                {"memory_clock_khz", d.mem_clock_khz},
                {"memory_bus_width_bits", d.mem_bus_width_bits},
                {"pci_bus_id", d.pci_bus_id}});
  } else {
    dev["no_gpu_reason"] = d.no_gpu_reason;
  }
  if (!r.nvml_driver_version.empty()) dev["nvml_driver_version"] = r.nvml_driver_version;
  const MeasureOptions& m = r.measure;
  const SamplingRule rule = m.rule();
  return {{"schema_version", kReportSchemaVersion},
          {"tool", {{"name", "nvfp4bench"}, {"version", r.version}, {"git_revision", r.git_revision},
                    {"build_type", r.build_type}, {"compiler", r.compiler},
                    {"cuda_compiled_version", r.cuda_compiled_version}}},
          {"argv", r.argv},
          {"hostname", r.hostname},
          {"utc_time", r.utc_time},
          {"backend", r.backend},
          {"device", dev},
          {"seed", r.seed},
          {"tolerance", {{"rtol", r.tolerance.rtol}, {"atol", r.tolerance.atol}}},
          {"measurement", {{"mode", mode_name(m.mode)},
                           {"warmup", m.warmup},
                           {"warmup_s", m.warmup_s},
                           {"adaptive", rule.fixed_samples == 0},
                           {"iters", m.iters},
                           {"min_samples", rule.min_samples},
                           {"max_samples", rule.max_samples},
                           {"min_time_s", rule.min_time_s},
                           {"max_time_s", rule.max_time_s},
                           {"target_rse", rule.target_rse},
                           {"batch", m.batch},
                           {"min_clock_fraction", m.min_clock_fraction},
                           {"clock_source", r.clock_source},
                           {"clock_note", r.clock_note}}}};
}

static json stats_json(const Stats& s) {
  return {{"count", s.count},           {"median_us", s.median},   {"mean_us", s.mean},
          {"min_us", s.min},            {"max_us", s.max},         {"stdev_us", s.stdev},
          {"q1_us", s.q1},              {"q3_us", s.q3},           {"iqr_us", s.iqr()},
          {"median_ci_lo_us", s.median_ci_lo}, {"median_ci_hi_us", s.median_ci_hi},
          {"rse_median", s.rse_median()}, {"rse_mean", s.rse_mean()}};
}

static json clock_json(const ClockRecord& c) {
  return {{"source", c.source},
          {"default_mhz", c.policy.default_mhz},
          {"min_fraction", c.policy.min_fraction},
          {"threshold_mhz", c.policy.threshold_mhz()},
          {"dropped_low_clock", c.dropped_low_clock},
          {"read", c.read},
          {"min_mhz", c.min_mhz},
          {"median_mhz", c.median_mhz},
          {"max_mhz", c.max_mhz}};
}

static json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

static json timing_json(const TimingResult& t, bool keep_samples) {
  json j = {{"name", t.name}, {"role", t.role}, {"ran", t.ran}};
  if (!t.ran) {
    j["reason"] = t.reason;
    return j;
  }
  const Measurement& m = t.measurement;
  j["same_numerics"] = t.same_numerics;
  j["timer"] = m.timer;
  j["mode"] = mode_name(m.mode);
  j["l2_flushed"] = m.l2_flushed;
  j["persisting_l2_reset"] = m.persisting_l2_reset;
  j["copies"] = m.copies;
  j["rotation_bytes"] = m.rotation_bytes;
  j["launches_per_sample"] = m.launches_per_sample;
  j["warmup_runs"] = m.warmup_runs;
  j["warmup_s"] = m.warmup_s;
  j["sampling_s"] = m.sampling_s;
  j["stop_reason"] = m.stop_reason;
  j["attempts"] = m.attempts;
  j["stats"] = stats_json(m.stats);
  j["host_us_per_call"] = stats_json(m.host_call);
  if (m.timer == "cuda-events") {
    j["stream_held"] = m.stream_held;
    if (!m.stream_hold_note.empty()) j["stream_hold_note"] = m.stream_hold_note;
  }
  j["clock"] = clock_json(m.clock);
  j["tflops"] = t.tflops;
  j["gbps"] = t.gbps;
  if (t.role == "peer") {
    j["kernel_speedup"] = t.kernel_speedup;
    j["clock_ratio"] = t.clock_ratio;
  }
  j["sol_us"] = optional_json(t.sol_us);
  j["sol_fraction"] = optional_json(t.sol_fraction);
  j["sol_basis"] = t.sol_basis;
  if (keep_samples) {
    j["samples_us"] = m.samples_us;
    j["clock_mhz"] = m.clock_mhz;
  }
  return j;
}

static json verify_json(const VerifyResult& v) {
  json first = json::array();
  for (const auto& m : v.first)
    first.push_back({{"l", m.at.batch}, {"i", m.at.i}, {"j", m.at.j}, {"got", m.got},
                     {"expected", m.expected}, {"unwritten", m.unwritten}});
  // NaN is not JSON: store got/expected as strings when not finite.
  for (auto& f : first)
    for (const char* key : {"got", "expected"})
      if (!std::isfinite(f[key].get<double>())) f[key] = fmt::format("{}", f[key].get<double>());
  return {{"mode", v.mode},           {"passed", v.passed()},
          {"checked", v.checked},     {"mismatches", v.mismatches},
          {"unwritten", v.unwritten}, {"max_abs_err", v.max_abs_err},
          {"max_rel_err", v.max_rel_err}, {"first_mismatches", first}};
}

static json verdict_json(const VerdictChecks& v) {
  const TimedOutputsCheck& t = v.timed;
  json timed = {{"done", t.done}};
  if (t.done)
    timed.update({{"passed", t.failure.empty()}, {"secret", true}, {"secret_seed", t.secret_seed},
                  {"every_call", t.every_call}, {"runs", t.runs}, {"samples", t.samples},
                  {"outputs", t.outputs}, {"slots", t.slots}, {"elements_per_output", t.coords},
                  {"elements", t.elements}, {"failure", t.failure}});
  const IsolationCheck& i = v.isolation;
  json isolation = {{"done", i.done}, {"passed", i.failure.empty()}, {"holds", i.holds},
                    {"holds_timed_out", i.holds_timed_out}, {"max_start_skew_us", i.max_start_skew_us},
                    {"max_gap_us", i.max_gap_us}, {"failure", i.failure}};
  if (i.audited)
    isolation["stream_audit"] = {{"records", i.audit_records}, {"windows", i.audit_windows},
                                 {"outside", i.audit_outside}};
  json recheck = {{"done", v.recheck.done}};
  if (v.recheck.done)
    recheck.update({{"seed", v.recheck.seed}, {"against", v.recheck.against},
                    {"verification", verify_json(v.recheck.result)}});
  const Floor& f = v.floor;
  json floor = {{"known", f.known}};
  if (!f.known) {
    floor["reason"] = f.reason;
  } else {
    floor.update({{"floor_us", f.floor_s * 1e6}, {"compute_us", f.compute_s * 1e6},
                  {"memory_us", f.memory_s * 1e6}, {"memory_counted", f.memory_counted},
                  {"tflops", f.tflops}, {"bandwidth_tbs", f.bandwidth_tbs}, {"basis", f.basis},
                  {"passed", v.floor_failure.empty()}, {"failure", v.floor_failure}});
  }
  return {{"timed_outputs", timed}, {"isolation", isolation}, {"recheck", recheck}, {"floor", floor}};
}

json to_json(const CaseResult& c, bool keep_samples) {
  const Shape& s = c.problem.shape;
  json j = {{"problem", {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"l", s.l},
                         {"dist", dist_name(c.problem.dist)}, {"seed", c.problem.seed},
                         {"out_dtype", "fp16"}, {"flops", s.flops()},
                         {"bytes", {{"a", c.bytes.a}, {"b", c.bytes.b}, {"sfa_blocked", c.bytes.sfa_blocked},
                                    {"sfb_blocked", c.bytes.sfb_blocked}, {"c", c.bytes.c},
                                    {"min_traffic", c.bytes.min_traffic()}}}}},
            {"kernel", {{"name", c.kernel},
                        {"asked", c.kernel_asked.empty() ? c.kernel : c.kernel_asked},
                        {"description", c.kernel_description}}},
            {"reference", {{"name", c.reference}, {"description", c.reference_description}}},
            {"disposition", disposition_name(c.disposition)},
            {"message", c.message},
            {"tolerance", {{"rtol", c.tolerance.rtol}, {"atol", c.tolerance.atol}}},
            {"notes", c.notes}};
  if (!c.kernel_configuration.empty()) j["kernel"]["configuration"] = c.kernel_configuration;
  if (c.verification) j["verification"] = verify_json(*c.verification);
  if (c.speed_of_light) {
    const SolResult& sol = *c.speed_of_light;
    json sj = {{"known", sol.known}, {"gpu", sol.gpu}};
    if (!sol.known) {
      sj["reason"] = sol.reason;
    } else {
      sj.update({{"bytes", sol.bytes}, {"flops", sol.flops}, {"memory_us", sol.memory_s * 1e6},
                 {"compute_us", sol.compute_s * 1e6}, {"sol_us", sol.sol_s * 1e6},
                 {"bound", sol.bound()}, {"compute_format", sol.compute_format},
                 {"bandwidth_tbs", sol.bandwidth_tbs}, {"tflops", sol.tflops},
                 {"basis", sol.compute_basis}});
    }
    j["speed_of_light"] = sj;
  }
  if (c.verdict) j["verdict"] = verdict_json(*c.verdict);
  if (c.exact_kernel)
    j["exact_check"] = {{"kernel", verify_json(*c.exact_kernel)},
                        {"reference", verify_json(*c.exact_reference)}};
  if (c.kernel_timing) j["kernel_timing"] = timing_json(*c.kernel_timing, keep_samples);
  if (c.reference_timing) j["reference_timing"] = timing_json(*c.reference_timing, keep_samples);
  json peers = json::array();
  for (const auto& p : c.peers) peers.push_back(timing_json(p, keep_samples));
  j["peers"] = peers;
  return j;
}

json make_report(const RunInfo& info, const std::vector<CaseResult>& cases, bool keep_samples) {
  json j = to_json(info);
  json arr = json::array();
  for (const auto& c : cases) arr.push_back(to_json(c, keep_samples));
  j["cases"] = arr;
  return j;
}

namespace {

class JsonWriter final : public ReportWriter {
 public:
  std::string format() const override { return "json"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases,
                     bool keep_samples) const override {
    return make_report(info, cases, keep_samples).dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_writer() { return std::make_unique<JsonWriter>(); }

}  // namespace nvfp4
