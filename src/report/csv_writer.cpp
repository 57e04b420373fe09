// CSV: a header, one row per case's kernel and one per other timing (RFC 4180 quoting), for
// spreadsheets and pandas.
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
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases, bool) const override {
    std::string out =
        "name,implementation,role,m,n,k,l,dist,seed,disposition,mode,samples,median_us,mean_us,"
        "min_us,max_us,stdev_us,q1_us,q3_us,iqr_us,median_ci_lo_us,median_ci_hi_us,rse_median,"
        "tflops,gbps,sol_fraction,sm_clock_mhz,dropped_low_clock,stop_reason,message\n";
    const BenchNames names(info, cases);
    // Every case has its kernel's row, timed or not (a case that failed before timing keeps its
    // disposition and message); the reference and the peers that ran follow with their own
    // status, "ran": the disposition judges the kernel, not them.
    for (const CaseResult& c : cases) {
      const Shape& sh = c.problem.shape;
      const auto head = [&](const std::string& name, const std::string& impl, const std::string& role,
                            const std::string& status, const std::string& mode) {
        return fmt::format("{},{},{},{},{},{},{},{},{},{},{},", csv_field(name), csv_field(impl), role,
                           sh.m, sh.n, sh.k, sh.l, dist_name(c.problem.dist), c.problem.seed,
                           status, mode);
      };
      const auto timed = [&](const TimingResult& t, const std::string& status, const std::string& msg) {
        const Measurement& m = t.measurement;
        const Stats& s = m.stats;
        std::string row = head(names.of(c, t), t.name, t.role, status, mode_name(m.mode));
        row += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},", s.count, s.median, s.mean,
                           s.min, s.max, s.stdev, s.q1, s.q3, s.iqr(), s.median_ci_lo,
                           s.median_ci_hi, s.rse_median(), t.tflops, t.gbps);
        row += fmt::format("{},{},{},{},{}\n",
                           t.sol_fraction ? fmt::format("{}", *t.sol_fraction) : std::string(),
                           // no clock read (the host backend): empty, not 0 MHz
                           m.clock.read > 0 ? fmt::format("{}", m.clock.median_mhz) : std::string(),
                           m.clock.dropped_low_clock, csv_field(m.stop_reason),
                           csv_field(msg));
        return row;
      };
      const std::string disposition = disposition_name(c.disposition);
      if (c.kernel_timing && c.kernel_timing->ran) {
        out += timed(*c.kernel_timing, disposition, c.message);
      } else {
        out += head(names.kernel(c), c.kernel, "kernel", disposition, kernel_mode(info, c));
        out += std::string(18, ',') + csv_field(c.message) + "\n";  // no timing: 18 empty fields
      }
      if (c.reference_timing && c.reference_timing->ran) out += timed(*c.reference_timing, "ran", "");
      for (const TimingResult& p : c.peers)
        if (p.ran) out += timed(p, "ran", "");
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_csv_writer() { return std::make_unique<CsvWriter>(); }

}  // namespace nvfp4
