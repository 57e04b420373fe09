// google-benchmark's JSON (what github-action-benchmark's "googlecpp" tool reads): a context and
// one "iteration" entry per timing. real_time is the median per launch; cpu_time repeats it (the
// host thread's CPU time of device work means nothing); iterations is the sample count.
#include <nlohmann/json.hpp>

#include <thread>

#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

class GbenchWriter final : public ReportWriter {
 public:
  std::string format() const override { return "gbench"; }
  std::string render(const RunInfo& info, const std::vector<CaseResult>& cases,
                     bool) const override {
    using nlohmann::json;
    json ctx = {{"date", info.utc_time},
                {"host_name", info.hostname},
                {"executable", info.argv.empty() ? "nvfp4bench" : info.argv.front()},
                {"num_cpus", std::thread::hardware_concurrency()},
                {"mhz_per_cpu", 0},
                {"cpu_scaling_enabled", false},
                {"caches", json::array()},
                {"load_avg", json::array()},
                {"library_build_type", info.build_type == "Debug" ? "debug" : "release"},
                {"nvfp4bench_version", info.version},
                {"git_revision", info.git_revision},
                {"backend", info.backend},
                {"device", info.device.has_gpu ? info.device.name : "none (host backend)"}};
    json benches = json::array();
    int64_t index = 0;
    for (const TimingRow& r : timing_rows(cases)) {
      const Measurement& m = r.t->measurement;
      const Stats& s = m.stats;
      const std::string name = bench_name(*r.c, *r.t);
      json b = {{"name", name},
                {"family_index", index++},
                {"per_family_instance_index", 0},
                {"run_name", name},
                {"run_type", "iteration"},
                {"repetitions", 1},
                {"repetition_index", 0},
                {"threads", 1},
                {"iterations", s.count},
                {"real_time", s.median},
                {"cpu_time", s.median},
                {"time_unit", "us"},
                {"label", m.mode + ", " + m.stop_reason},
                // Counters: user-defined numeric fields, as google-benchmark writes them.
                {"tflops", r.t->tflops},
                {"bytes_per_second", r.t->gbps * 1e9},
                {"mean_us", s.mean},
                {"min_us", s.min},
                {"stdev_us", s.stdev},
                {"iqr_us", s.iqr()},
                {"rse_median", s.rse_median()},
                {"sm_clock_mhz", m.clock.median_mhz}};
      if (r.t->sol_fraction) b["sol_fraction"] = *r.t->sol_fraction;
      if (r.c->disposition != Disposition::Passed) {
        b["error_occurred"] = true;
        b["error_message"] = std::string(disposition_name(r.c->disposition)) + ": " + r.c->message;
      }
      benches.push_back(b);
    }
    return json{{"context", ctx}, {"benchmarks", benches}}.dump(2) + "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_gbench_writer() { return std::make_unique<GbenchWriter>(); }

}  // namespace nvfp4
