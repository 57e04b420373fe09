// CSV: a header and one row per timing (RFC 4180 quoting), for spreadsheets and pandas.
#include <fmt/format.h>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

class CsvWriter final : public ReportWriter {
 public:
  std::string format() const override { return "csv"; }
  std::string render(const RunInfo&, const std::vector<CaseResult>& cases, bool) const override {
    std::string out =
        "name,implementation,role,m,n,k,l,dist,seed,disposition,mode,samples,median_us,mean_us,"
        "min_us,max_us,stdev_us,q1_us,q3_us,iqr_us,median_ci_lo_us,median_ci_hi_us,rse_median,"
        "tflops,gbps,sol_fraction,sm_clock_mhz,dropped_low_clock,stop_reason\n";
    for (const TimingRow& r : timing_rows(cases)) {
      const Shape& sh = r.c->problem.shape;
      const Measurement& m = r.t->measurement;
      const Stats& s = m.stats;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(bench_name(*r.c, *r.t)),
                         csv_field(r.t->name), r.t->role, sh.m, sh.n, sh.k, sh.l,
                         dist_name(r.c->problem.dist), r.c->problem.seed,
                         disposition_name(r.c->disposition), m.mode, s.count);
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},", s.median, s.mean, s.min, s.max,
                         s.stdev, s.q1, s.q3, s.iqr(), s.median_ci_lo, s.median_ci_hi,
                         s.rse_median(), r.t->tflops, r.t->gbps);
      out += fmt::format("{},{},{},{}\n",
                         r.t->sol_fraction ? fmt::format("{}", *r.t->sol_fraction) : std::string(),
                         m.clock.median_mhz, m.clock.dropped_low_clock, csv_field(m.stop_reason));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_csv_writer() { return std::make_unique<CsvWriter>(); }

}  // namespace nvfp4
