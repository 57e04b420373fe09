// google-benchmark's JSON (what github-action-benchmark's "googlecpp" tool and Google Benchmark's
// tools/compare.py read): a context and one "iteration" entry per timing. real_time is the median
// per launch; cpu_time repeats it (the host thread's CPU time of device work means nothing);
// iterations is the sample count. Counters that do not apply (no SM clock read, no speed of
// light) are absent, not 0.
//
// A case that did not pass keeps its kernel's name, so each client sets it against that name's
// passing runs (docs/report.md, "Failed cases in each client"):
// - github-action-benchmark reads only name, real_time and time_unit (error_occurred is ignored)
//   and alerts when real_time / previous real_time of the same name exceeds its threshold: the
//   entry's real_time and cpu_time are kGbenchFailedTime, 1e12 us (11.6 days, no GEMM's median),
//   an alert (a failed job with fail-on-alert) against any earlier passing run. A missing
//   real_time would be charted as nothing and compared as NaN: no alert.
// - compare.py lists every name of both files with old and new times, and leaves entries of
//   run_type "aggregate" out of its OVERALL_GEOMEAN: the entry is an aggregate named "failed",
//   so its row shows the 1e12 (13 digits, where 1e300 printed 301) and the geometric mean is
//   that of the cases that passed.
// Every case has its kernel entry, also one that failed before any timing. The reference is
// listed only when it was measured with real samples (>= 2), so a 1-sample CPU reference neither
// charts nor alerts.
#include <nlohmann/json.hpp>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

constexpr double kGbenchFailedTime = 1e12;  // us: a failed case's real_time (see above)

// The fields every google-benchmark "iteration" entry has; real_time is in microseconds.
nlohmann::json bench_entry(const std::string& name, int64_t index, int64_t iterations,
                           double real_time_us, const std::string& label) {
  return {{"name", name},
          {"family_index", index},
          {"per_family_instance_index", 0},
          {"run_name", name},
          {"run_type", "iteration"},
          {"repetitions", 1},
          {"repetition_index", 0},
          {"threads", 1},
          {"iterations", iterations},
          {"real_time", real_time_us},
          {"cpu_time", real_time_us},
          {"time_unit", "us"},
          {"label", label}};
}

class GbenchWriter final : public ReportWriter {
 public:
  std::string format() const override { return "gbench"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases,
                     bool) const override {
    using nlohmann::json;
    json ctx = {{"date", info.utc_time},
                {"host_name", info.hostname},
                {"executable", info.argv.empty() ? "nvfp4bench" : info.argv.front()},
                {"library_build_type", info.build_type == "Debug" ? "debug" : "release"},
                {"nvfp4bench_version", info.version},
                {"git_revision", info.git_revision},
                {"backend", info.backend},
                {"device", info.device.has_gpu ? info.device.name : "none (host backend)"}};
    const BenchNames names(info, cases);
    json benches = json::array();
    int64_t index = 0;
    for (const CaseResult& c : cases) {
      const bool timed = c.kernel_timing && c.kernel_timing->ran;
      if (c.disposition != Disposition::Passed) {
        json b = bench_entry(names.kernel(c), index++, timed ? c.kernel_timing->measurement.stats.count : 0,
                             kGbenchFailedTime,
                             std::string("FAILED: ") + disposition_name(c.disposition));
        b["run_type"] = "aggregate";  // compare.py: out of OVERALL_GEOMEAN (see above)
        b["aggregate_name"] = "failed";
        b["aggregate_unit"] = "time";
        b["error_occurred"] = true;
        b["error_message"] = std::string(disposition_name(c.disposition)) + ": " + c.message;
        if (timed) b["measured_median_us"] = c.kernel_timing->measurement.stats.median;
        benches.push_back(b);
      }
      std::vector<const TimingResult*> rows;
      if (timed && c.disposition == Disposition::Passed) rows.push_back(&*c.kernel_timing);
      if (c.reference_timing && charted(*c.reference_timing)) rows.push_back(&*c.reference_timing);
      for (const TimingResult& p : c.peers)
        if (p.ran) rows.push_back(&p);
      for (const TimingResult* t : rows) {
        const Measurement& m = t->measurement;
        const Stats& st = m.stats;
        json b = bench_entry(names.of(c, *t), index++, st.count, st.median,
                             std::string(mode_name(m.mode)) + ", " + m.stop_reason);
        // Counters: user-defined numeric fields, as google-benchmark writes them.
        b["tflops"] = t->tflops;
        b["bytes_per_second"] = t->gbps * 1e9;
        b["mean_us"] = st.mean;
        b["min_us"] = st.min;
        b["stdev_us"] = st.stdev;
        b["iqr_us"] = st.iqr();
        b["rse_median"] = st.rse_median();
        if (m.clock.read > 0) b["sm_clock_mhz"] = m.clock.median_mhz;
        if (t->sol_fraction) b["sol_fraction"] = *t->sol_fraction;
        benches.push_back(b);
      }
    }
    return json{{"context", ctx}, {"benchmarks", benches}}.dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_gbench_writer() { return std::make_unique<GbenchWriter>(); }

}  // namespace nvfp4
