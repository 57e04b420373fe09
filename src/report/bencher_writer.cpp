// Bencher Metric Format: {bench_name: {measure: {value, lower_value, upper_value}}}.
// "latency" is Bencher's built-in measure, in nanoseconds: the median with its 95% confidence
// interval (order statistics); "tflops" a custom one. Timings of cases that did not pass
// verification are left out: a wrong kernel's speed is no metric (the exit code says it failed).
#include <nlohmann/json.hpp>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

class BencherWriter final : public ReportWriter {
 public:
  std::string format() const override { return "bencher"; }
  std::string render(const RunInfo&, const std::vector<CaseResult>& cases, bool) const override {
    using nlohmann::json;
    json out = json::object();
    for (const TimingRow& r : timing_rows(cases)) {
      if (r.c->disposition != Disposition::Passed) continue;
      const Stats& s = r.t->measurement.stats;
      if (s.count == 0) continue;
      const double flops = r.c->problem.shape.flops();
      auto tflops_at = [&](double us) { return us > 0 ? flops / (us * 1e-6) * 1e-12 : 0.0; };
      json m = {{"latency", {{"value", s.median * 1e3},
                             {"lower_value", s.median_ci_lo * 1e3},
                             {"upper_value", s.median_ci_hi * 1e3}}},
                {"tflops", {{"value", r.t->tflops},
                            {"lower_value", tflops_at(s.median_ci_hi)},
                            {"upper_value", tflops_at(s.median_ci_lo)}}}};
      if (r.t->sol_fraction) m["sol-fraction"] = {{"value", *r.t->sol_fraction}};
      out[bench_name(*r.c, *r.t)] = m;
    }
    return out.dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_bencher_writer() { return std::make_unique<BencherWriter>(); }

}  // namespace nvfp4
