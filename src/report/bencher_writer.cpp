// Bencher Metric Format: {bench_name: {measure: {value, lower_value, upper_value}}}.
// "latency" is Bencher's built-in measure, in nanoseconds: the median with its 95% confidence
// interval (order statistics); "tflops" a custom one. Bencher has no error field: every case's
// kernel benchmark carries a custom measure "verification", 1 when the case passed and 0 when
// not (incorrect, not supported, error), so a lower-boundary threshold of 1 on it alerts on a
// failure. A case that did not pass has that measure alone: a wrong kernel's speed is no metric.
// A reference is listed only when measured with real samples (>= 2).
#include <nlohmann/json.hpp>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

class BencherWriter final : public ReportWriter {
 public:
  std::string format() const override { return "bencher"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases, bool) const override {
    using nlohmann::json;
    const BenchNames names(info, cases);
    json out = json::object();
    for (const CaseResult& c : cases) {
      if (c.disposition != Disposition::Passed)
        out[names.kernel(c)] = {{"verification", {{"value", 0}}}};
    }
    for (const TimingRow& r : timing_rows(cases)) {
      if (r.c->disposition != Disposition::Passed) continue;
      if (r.t->role == "reference" && !charted(*r.t)) continue;
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
      if (r.t->role == "kernel") m["verification"] = {{"value", 1}};
      out[names.of(*r.c, *r.t)] = m;
    }
    return out.dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_bencher_writer() { return std::make_unique<BencherWriter>(); }

}  // namespace nvfp4
