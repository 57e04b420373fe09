#include "src/report/writer.hpp"

#include <fmt/format.h>

namespace nvfp4 {

namespace {
using WriterFactory = std::unique_ptr<ReportWriter> (*)();
// One line per format.
const WriterFactory kWriters[] = {make_json_writer, make_gbench_writer, make_bencher_writer,
                                  make_csv_writer, make_markdown_writer, make_text_writer};
}  // namespace

std::unique_ptr<ReportWriter> make_writer(const std::string& format) {
  for (WriterFactory f : kWriters)
    if (auto w = f(); w->format() == format) return w;
  return nullptr;
}

std::vector<std::string> writer_formats() {
  std::vector<std::string> out;
  for (WriterFactory f : kWriters) out.push_back(f()->format());
  return out;
}

std::vector<TimingRow> timing_rows(const std::vector<CaseResult>& cases) {
  std::vector<TimingRow> rows;
  for (const CaseResult& c : cases) {
    if (c.kernel_timing && c.kernel_timing->ran) rows.push_back({&c, &*c.kernel_timing});
    if (c.reference_timing && c.reference_timing->ran) rows.push_back({&c, &*c.reference_timing});
    for (const TimingResult& p : c.peers)
      if (p.ran) rows.push_back({&c, &p});
  }
  return rows;
}

std::string bench_name(const CaseResult& c, const std::string& impl, const std::string& mode) {
  const Shape& s = c.problem.shape;
  return fmt::format("{}/{}x{}x{}x{}/{}/{}", impl, s.m, s.n, s.k, s.l, dist_name(c.problem.dist), mode);
}

std::string bench_name(const CaseResult& c, const TimingResult& t) {
  return bench_name(c, t.name, t.measurement.mode);
}

std::string kernel_mode(const RunInfo& info, const CaseResult& c) {
  if (c.kernel_timing && c.kernel_timing->ran) return c.kernel_timing->measurement.mode;
  return info.backend == "host" ? mode_name(MeasureMode::Hot) : mode_name(info.measure.mode);
}

std::string human_duration(double us) {
  const double a = us < 0 ? -us : us;
  if (a < 1.0) return fmt::format("{:.2f} ns", us * 1e3);
  if (a < 1e3) return fmt::format("{:.2f} us", us);
  if (a < 1e6) return fmt::format("{:.2f} ms", us * 1e-3);
  return fmt::format("{:.2f} s", us * 1e-6);
}

std::string sample_count(int64_t n) { return fmt::format("{} sample{}", n, n == 1 ? "" : "s"); }

bool charted(const TimingResult& t) { return t.ran && t.measurement.stats.count >= 2; }

}  // namespace nvfp4
