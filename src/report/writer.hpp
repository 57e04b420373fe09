// Report writers, one per output format (nvbench's printer idea): each formats the result model
// (RunInfo + CaseResults) and nothing else. Adding a format is one file and one line in writer.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/report/result.hpp"

namespace nvfp4 {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual std::string format() const = 0;  // the --format value
  virtual std::string render(const RunInfo& info, const std::vector<CaseResult>& cases,
                             bool keep_samples) const = 0;
};

std::unique_ptr<ReportWriter> make_json_writer();      // native report (src/report/json_writer.hpp)
std::unique_ptr<ReportWriter> make_gbench_writer();    // google-benchmark JSON
std::unique_ptr<ReportWriter> make_bencher_writer();   // Bencher Metric Format
std::unique_ptr<ReportWriter> make_csv_writer();       // one row per timing
std::unique_ptr<ReportWriter> make_markdown_writer();  // a table for pull-request comments
std::unique_ptr<ReportWriter> make_text_writer();      // the terminal summary a run prints

// The writer for a --format value, or nullptr when unknown.
std::unique_ptr<ReportWriter> make_writer(const std::string& format);
// Every --format value, in the order help lists them.
std::vector<std::string> writer_formats();
// The writer for a format given as `flag`, else usage_error "FLAG 'F': unknown; expected one of: ...".
std::unique_ptr<ReportWriter> writer_for(const std::string& flag, const std::string& format);

// One timed run of an implementation within a case, as the flat formats list them.
struct TimingRow {
  const CaseResult* c = nullptr;
  const TimingResult* t = nullptr;
};
// Every timing that ran: each case's kernel, reference and peers, in that order.
std::vector<TimingRow> timing_rows(const std::vector<CaseResult>& cases);
// "naive/128x7168x16384x1/gpumode/cold": implementation, shape, distribution, timing mode.
std::string bench_name(const CaseResult& c, const TimingResult& t);
std::string bench_name(const CaseResult& c, const std::string& impl, const std::string& mode);
// The names the flat formats (gbench, bencher, csv) give each case's kernel and each timing that
// ran: bench_name, which a single run keeps as it is; where cases share one (a sweep over seeds,
// over kernel configurations, or a reference timed once per kernel of a problem) each of them
// gains what sets it apart, in this order: "/seed=S", "/config=C" (spaces as '_'),
// "/with=KERNEL" (a reference's or peer's case kernel), then "#2", "#3", ... Bencher keys its
// metrics by name and dashboards chart by name: one name, one series.
class BenchNames {
 public:
  BenchNames(const RunInfo& info, const std::vector<CaseResult>& cases);
  // The kernel's entry of case c (timed or not), and a timing of c that ran.
  const std::string& kernel(const CaseResult& c) const;
  const std::string& of(const CaseResult& c, const TimingResult& t) const;

 private:
  struct Entry {
    const CaseResult* c;
    std::string role, impl, name;
  };
  std::vector<Entry> entries_;
  const std::string& find(const CaseResult& c, const std::string& role, const std::string& impl) const;
};
// The timing mode a case's kernel was (or would have been) timed in: its timing's, else the
// run's ("hot" on the host backend, which flushes no cache): a failed case keeps the name of the
// series its passing runs fill.
std::string kernel_mode(const RunInfo& info, const CaseResult& c);
// A duration given in microseconds, in the unit that fits: "812.40 ns", "2.61 us", "435.00 us",
// "5.61 ms", "5.61 s" (two decimals).
std::string human_duration(double us);
// "1 sample", "3 samples".
std::string sample_count(int64_t n);

// A timing with real samples to chart: at least 2 (a 1-sample time is no median).
bool charted(const TimingResult& t);

}  // namespace nvfp4
