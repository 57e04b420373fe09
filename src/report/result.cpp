#include "src/report/result.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <ctime>

#include "src/measure/sm_clock.hpp"

namespace nvfp4 {

const char* disposition_name(Disposition d) {
  switch (d) {
    case Disposition::Passed: return "passed";
    case Disposition::Incorrect: return "incorrect";
    case Disposition::NotSupported: return "not_supported";
    case Disposition::Error: return "error";
  }
  return "error";
}

RunInfo RunInfo::collect(int argc, char** argv, const DeviceInfo& dev, const MeasureOptions& m) {
  RunInfo r;
  for (int i = 0; i < argc; ++i) r.argv.emplace_back(argv[i]);
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) r.hostname = host;
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  r.utc_time = buf;
  r.backend = dev.has_gpu ? "cuda" : "host";
  r.device = dev;
  r.measure = m;
#if defined(__clang__)
  r.compiler = std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
  r.compiler = std::string("g++ ") + __VERSION__;
#endif
#ifdef NVFP4_BUILD_TYPE
  r.build_type = NVFP4_BUILD_TYPE;
#endif
  std::string why;
  if (auto nvml = Nvml::open(dev.pci_bus_id, &why)) r.nvml_driver_version = nvml->driver_version();
  return r;
}

void TimingResult::set_speed_of_light(double us, const std::string& basis) {
  if (!(us > 0)) return;
  sol_us = us;
  sol_basis = basis;
  if (measurement.stats.median > 0) sol_fraction = us / measurement.stats.median;
}

TimingResult make_timing(const std::string& name, const std::string& role, Measurement m,
                         const Shape& s, const TensorBytes& bytes, bool same_numerics) {
  TimingResult t;
  t.name = name;
  t.role = role;
  t.ran = true;
  t.same_numerics = same_numerics;
  const double sec = m.stats.median * 1e-6;
  if (sec > 0) {
    t.tflops = s.flops() / sec * 1e-12;
    t.gbps = double(bytes.min_traffic()) / sec * 1e-9;
  }
  t.measurement = std::move(m);
  return t;
}

std::string verdict_line(const CaseResult& r) {
  if (!r.verdict) return {};
  const VerdictChecks& v = *r.verdict;
  std::string line;
  if (v.timed.done)
    line += fmt::format("timed outputs {} ({} sample{} verified{}, {} output{}, {} elements; fresh "
                        "secret operands every run)",
                        v.timed.failure.empty() ? "right" : "WRONG", v.timed.samples,
                        v.timed.samples == 1 ? "" : "s", v.timed.every_call ? " in full" : "",
                        v.timed.outputs, v.timed.outputs == 1 ? "" : "s", v.timed.elements);
  if (v.isolation.done)
    line += fmt::format("; {} ({} holds, CTA start skew <= {:.0f} us)",
                        v.isolation.failure.empty() ? "nothing outside the timed stream"
                                                    : "WORK OUTSIDE THE TIMED STREAM",
                        v.isolation.holds, v.isolation.max_start_skew_us);
  if (v.isolation.audited)
    line += fmt::format(" (CUPTI audit: {} windows, {} operation{} outside)", v.isolation.audit_windows,
                        v.isolation.audit_outside, v.isolation.audit_outside == 1 ? "" : "s");
  if (v.recheck.done)
    line += fmt::format("; recheck on fresh operands {} ({} elements)",
                        v.recheck.result.passed() ? "right" : "WRONG", v.recheck.result.checked);
  if (v.floor.known)
    line += fmt::format("; floor {:.4g} us {}", v.floor.floor_s * 1e6,
                        v.floor_failure.empty() ? "respected" : "BROKEN");
  else
    line += "; no floor: " + v.floor.reason;
  return line;
}

std::string host_call_text(const Measurement& m) {
  if (m.timer != "cuda-events" || m.host_call.count == 0) return {};
  return fmt::format(", host {:.3g} us/call", m.host_call.median);
}

}  // namespace nvfp4
