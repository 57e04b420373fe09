#include "report/json_report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace nvfp4 {

using nlohmann::json;

json to_json(const RunInfo& r) {
  const DeviceInfo& d = r.device;
  json dev = {{"has_gpu", d.has_gpu},
              {"cuda_runtime_version", d.runtime_version},
              {"cuda_driver_version", d.driver_version},
              {"cublaslt_version", d.cublaslt_version}};
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
  return {{"schema_version", kReportSchemaVersion},
          {"tool", {{"name", "nvfp4bench"}, {"version", r.version}, {"git_revision", r.git_revision}}},
          {"argv", r.argv},
          {"hostname", r.hostname},
          {"utc_time", r.utc_time},
          {"backend", r.backend},
          {"device", dev},
          {"measurement", {{"warmup", r.measure.warmup}, {"iters", r.measure.iters},
                           {"flush_l2", r.measure.flush_l2}}}};
}

static json stats_json(const Stats& s) {
  return {{"count", s.count}, {"median_us", s.median}, {"mean_us", s.mean}, {"min_us", s.min},
          {"max_us", s.max},  {"stdev_us", s.stdev},   {"q1_us", s.q1},     {"q3_us", s.q3},
          {"iqr_us", s.iqr()}};
}

static json timing_json(const TimingResult& t, bool keep_samples) {
  json j = {{"name", t.name}, {"role", t.role}, {"ran", t.ran}};
  if (!t.ran) {
    j["reason"] = t.reason;
    return j;
  }
  j["same_numerics"] = t.same_numerics;
  j["timer"] = t.measurement.timer;
  j["l2_flushed"] = t.measurement.l2_flushed;
  j["stats"] = stats_json(t.measurement.stats);
  j["tflops"] = t.tflops;
  j["gbps"] = t.gbps;
  if (t.role == "peer") j["kernel_speedup"] = t.kernel_speedup;
  if (keep_samples) j["samples_us"] = t.measurement.samples_us;
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

json to_json(const CaseResult& c, bool keep_samples) {
  const Shape& s = c.problem.shape;
  json j = {{"problem", {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"l", s.l},
                         {"dist", dist_name(c.problem.dist)}, {"seed", c.problem.seed},
                         {"out_dtype", "fp16"}, {"flops", s.flops()},
                         {"bytes", {{"a", c.bytes.a}, {"b", c.bytes.b}, {"sfa_blocked", c.bytes.sfa_blocked},
                                    {"sfb_blocked", c.bytes.sfb_blocked}, {"c", c.bytes.c},
                                    {"min_traffic", c.bytes.min_traffic()}}}}},
            {"kernel", {{"name", c.kernel}, {"description", c.kernel_description}}},
            {"reference", {{"name", c.reference}, {"description", c.reference_description}}},
            {"disposition", disposition_name(c.disposition)},
            {"message", c.message},
            {"tolerance", {{"rtol", c.tolerance.rtol}, {"atol", c.tolerance.atol}}},
            {"notes", c.notes}};
  if (c.verification) j["verification"] = verify_json(*c.verification);
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

void write_text_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw usage_error(fmt::format("output file {}: cannot be written ({})", path, std::strerror(errno)));
    out << text;
    out.flush();
    if (!out) throw runtime_error(fmt::format("writing {}: {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw usage_error(fmt::format("output file {}: cannot be renamed into place ({})", path, std::strerror(errno)));
}

}  // namespace nvfp4
