#include "src/report/writer.hpp"

#include <fmt/format.h>

#include <map>

#include "src/core/error.hpp"

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

std::unique_ptr<ReportWriter> writer_for(const std::string& flag, const std::string& format) {
  if (auto w = make_writer(format)) return w;
  std::string all;
  for (const auto& f : writer_formats()) all += (all.empty() ? "" : ", ") + f;
  throw usage_error(fmt::format("{} '{}': unknown; expected one of: {}", flag, format, all));
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
  return bench_name(c, t.name, mode_name(t.measurement.mode));
}

BenchNames::BenchNames(const RunInfo& info, const std::vector<CaseResult>& cases) {
  for (const CaseResult& c : cases) {
    const std::string mode = kernel_mode(info, c);
    entries_.push_back({&c, "kernel", c.kernel, bench_name(c, c.kernel, mode)});
    if (c.reference_timing && c.reference_timing->ran)
      entries_.push_back({&c, "reference", c.reference_timing->name, bench_name(c, *c.reference_timing)});
    for (const TimingResult& p : c.peers)
      if (p.ran) entries_.push_back({&c, "peer", p.name, bench_name(c, p)});
  }
  // Each rule applies to the entries that still share a name, and only when it tells them apart.
  using Part = std::string (*)(const Entry&);
  const Part parts[] = {
      [](const Entry& e) { return fmt::format("/seed={}", e.c->problem.seed); },
      [](const Entry& e) {
        std::string cfg = e.role == "kernel" ? e.c->kernel_configuration : std::string();
        for (char& ch : cfg)
          if (ch == ' ') ch = '_';
        return cfg.empty() ? std::string() : "/config=" + cfg;
      },
      [](const Entry& e) { return e.role == "kernel" ? std::string() : "/with=" + e.c->kernel; },
  };
  for (Part part : parts) {
    std::map<std::string, std::vector<Entry*>> by_name;
    for (Entry& e : entries_) by_name[e.name].push_back(&e);
    for (auto& [name, group] : by_name) {
      if (group.size() < 2) continue;
      bool differ = false;
      for (const Entry* e : group) differ = differ || part(*e) != part(*group.front());
      if (differ)
        for (Entry* e : group) e->name += part(*e);
    }
  }
  std::map<std::string, int> seen;
  for (Entry& e : entries_)
    if (const int n = ++seen[e.name]; n > 1) e.name += fmt::format("#{}", n);
}

const std::string& BenchNames::find(const CaseResult& c, const std::string& role,
                                    const std::string& impl) const {
  for (const Entry& e : entries_)
    if (e.c == &c && e.role == role && e.impl == impl) return e.name;
  throw runtime_error(fmt::format("internal error: no bench name for {} '{}'", role, impl));
}

const std::string& BenchNames::kernel(const CaseResult& c) const { return find(c, "kernel", c.kernel); }

const std::string& BenchNames::of(const CaseResult& c, const TimingResult& t) const {
  return find(c, t.role, t.name);
}

std::string kernel_mode(const RunInfo& info, const CaseResult& c) {
  if (c.kernel_timing && c.kernel_timing->ran) return mode_name(c.kernel_timing->measurement.mode);
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
