// Every report writer on one synthetic result model, parsed back: JSON with nlohmann, CSV by
// splitting, the google-benchmark and Bencher structures their consumers read, the Markdown table.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <sstream>

#include "src/core/error.hpp"
#include "src/report/json_writer.hpp"
#include "src/report/report_reader.hpp"
#include "src/report/writer.hpp"

using namespace nvfp4;
using nlohmann::json;

namespace {

Measurement fake_measurement(std::vector<double> samples, const char* mode) {
  Measurement m;
  m.timer = "cuda-events";
  m.mode = *parse_mode(mode);
  m.l2_flushed = std::string(mode) == "cold";
  m.samples_us = std::move(samples);
  m.stats = summarize(m.samples_us);
  m.stop_reason = "noise target reached";
  m.attempts = m.stats.count + 1;
  m.clock.source = "nvml";
  m.clock.policy = {1980, 0.75};
  m.clock.dropped_low_clock = 1;
  m.clock_mhz.assign(m.samples_us.size(), 1900);
  summarize_clocks(m.clock, m.clock_mhz);
  return m;
}

struct Fixture {
  RunInfo info;
  std::vector<CaseResult> cases;
  Fixture() {
    info.argv = {"nvfp4bench", "--m", "128"};
    info.hostname = "box";
    info.utc_time = "2026-01-02T03:04:05Z";
    info.backend = "cuda";
    info.device.has_gpu = true;
    info.device.name = "NVIDIA H200";
    info.build_type = "Release";
    CaseResult a;
    a.problem = {{128, 7168, 16384, 1}, Dist::GpuMode, 0};
    a.bytes = TensorBytes::of(a.problem.shape);
    a.kernel = "naive";
    a.reference = "weird,ref\"name";  // CSV must quote this
    a.disposition = Disposition::Passed;
    a.verification = VerifyResult{};
    a.kernel_timing = make_timing("naive", "kernel", fake_measurement({100, 102, 101, 99, 100}, "cold"),
                                  a.problem.shape, a.bytes);
    a.kernel_timing->set_speed_of_light(50, "test GPU, memory bound");
    a.reference_timing = make_timing(a.reference, "reference", fake_measurement({10, 11, 12}, "cold"),
                                     a.problem.shape, a.bytes);
    CaseResult b;
    b.problem = {{128, 4096, 7168, 2}, Dist::Normal, 5};
    b.bytes = TensorBytes::of(b.problem.shape);
    b.kernel = "naive";
    b.reference = "cpu-exact";
    b.disposition = Disposition::Incorrect;
    b.message = "3 of 100 checked elements mismatch (0 unwritten)";
    b.kernel_timing = make_timing("naive", "kernel", fake_measurement({20, 21, 22, 23}, "graph"),
                                  b.problem.shape, b.bytes);
    cases = {a, b};
  }
  std::string render(const std::string& format, bool samples = false) const {
    auto w = make_writer(format);
    EXPECT_TRUE(w) << format;
    return w ? w->render(info, cases, samples) : std::string();
  }
};

// Splits on `sep`; with csv_quotes, not inside "quoted" fields.
std::vector<std::string> split(const std::string& s, char sep, bool csv_quotes = true) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : s) {
    if (ch == '"' && csv_quotes) quoted = !quoted;
    if (ch == sep && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

TEST(Writers, EveryFormatIsRegisteredOnceAndUnknownIsNull) {
  EXPECT_EQ(writer_formats(), (std::vector<std::string>{"json", "gbench", "bencher", "csv", "md", "text"}));
  for (const auto& f : writer_formats()) EXPECT_EQ(make_writer(f)->format(), f);
  EXPECT_EQ(make_writer("xml"), nullptr);
}

// The terminal summary: one block per case, the device line only with a GPU, a line per timing,
// and why a case did not pass.
TEST(Writers, TextIsTheTerminalSummary) {
  Fixture f;
  f.cases[0].verification->mode = "full";
  f.cases[0].verification->checked = 100;
  const std::string t = f.render("text");
  EXPECT_NE(t.find("problem   128x7168x16384 L=1  dist=gpumode seed=0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("problem   128x4096x7168 L=2  dist=normal seed=5\n"), std::string::npos) << t;
  EXPECT_NE(t.find("device    NVIDIA H200 (compute capability"), std::string::npos) << t;
  EXPECT_NE(t.find("kernel    naive          "), std::string::npos) << t;
  EXPECT_NE(t.find("median ±"), std::string::npos) << t;
  EXPECT_NE(t.find("reference weird,ref\"name"), std::string::npos) << t;
  EXPECT_NE(t.find("verify    PASSED (full, 100 elements, 0 mismatches"), std::string::npos) << t;
  EXPECT_NE(t.find("result    incorrect: 3 of 100 checked elements mismatch (0 unwritten)\n"),
            std::string::npos) << t;
  EXPECT_EQ(t.find("config    "), std::string::npos) << t;
  f.cases[0].kernel_configuration = "tile 64";
  f.info.device.has_gpu = false;
  const std::string h = f.render("text");
  EXPECT_NE(h.find("config    tile 64\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("device    "), std::string::npos) << h;
}

// A peer timed at another SM clock than the kernel (the GPU lowers its clock under sustained
// load) says so beside its speedup, in text and in JSON (clock_ratio); within 3 % it does not.
TEST(Writers, PeerAtAnotherClockSaysSo) {
  ClockRecord kernel, peer;
  kernel.read = peer.read = 10;
  kernel.median_mhz = 1965;
  peer.median_mhz = 1620;
  EXPECT_NEAR(clock_ratio(peer, kernel), 1620.0 / 1965.0, 1e-12);
  EXPECT_TRUE(clocks_differ(clock_ratio(peer, kernel)));
  peer.median_mhz = 1920;  // 2.3 % apart
  EXPECT_FALSE(clocks_differ(clock_ratio(peer, kernel)));
  peer.read = 0;  // not read: no ratio, nothing said
  EXPECT_EQ(clock_ratio(peer, kernel), 0.0);
  EXPECT_FALSE(clocks_differ(0.0));

  Fixture f;
  auto peer_timing = [&](const char* name, double ratio) {
    TimingResult t = make_timing(name, "peer", fake_measurement({150, 151, 152}, "cold"), f.cases[0].problem.shape,
                                 f.cases[0].bytes);
    t.kernel_speedup = 1.5;
    t.clock_ratio = ratio;
    return t;
  };
  f.cases[0].peers = {peer_timing("dequant-f16", 0.82), peer_timing("f16-predeq", 0.99)};
  const std::string t = f.render("text");
  EXPECT_NE(t.find("kernel 1.50x faster [at 0.82x the kernel's SM clock]\n"), std::string::npos) << t;
  const size_t predeq = t.find("peer      f16-predeq");
  ASSERT_NE(predeq, std::string::npos) << t;
  EXPECT_EQ(t.substr(predeq, t.find('\n', predeq) - predeq).find("SM clock"), std::string::npos) << t;
  const json j = json::parse(f.render("json"));
  EXPECT_DOUBLE_EQ(j["cases"][0]["peers"][0]["clock_ratio"].get<double>(), 0.82);
  EXPECT_DOUBLE_EQ(j["cases"][0]["peers"][1]["clock_ratio"].get<double>(), 0.99);
}

TEST(Writers, NativeJsonRoundTrips) {
  const Fixture f;
  const json j = json::parse(f.render("json", true));
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(j["cases"].size(), 2u);
  const json& kt = j["cases"][0]["kernel_timing"];
  EXPECT_DOUBLE_EQ(kt["stats"]["median_us"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(kt["sol_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(kt["sol_us"].get<double>(), 50);
  EXPECT_EQ(kt["stop_reason"], "noise target reached");
  EXPECT_EQ(kt["clock"]["dropped_low_clock"], 1);
  EXPECT_EQ(kt["samples_us"].size(), 5u);
  EXPECT_TRUE(j["cases"][0]["reference_timing"]["sol_fraction"].is_null());
  EXPECT_EQ(j["cases"][1]["kernel_timing"]["mode"], "graph");
  EXPECT_FALSE(json::parse(f.render("json", false))["cases"][0]["kernel_timing"].contains("samples_us"));
}

TEST(Writers, GoogleBenchmarkJsonHasTheKeysItsReadersUse) {
  const Fixture f;
  const json j = json::parse(f.render("gbench"));
  ASSERT_TRUE(j.contains("context"));
  EXPECT_EQ(j["context"]["host_name"], "box");
  ASSERT_EQ(j["benchmarks"].size(), 3u);  // kernel + reference of case 1, kernel of case 2
  for (const json& b : j["benchmarks"])
    for (const char* key : {"name", "run_name", "run_type", "iterations", "real_time", "cpu_time",
                            "time_unit", "threads", "repetitions"})
      EXPECT_TRUE(b.contains(key)) << key;
  const json& k = j["benchmarks"][0];
  EXPECT_EQ(k["name"], "naive/128x7168x16384x1/gpumode/cold");
  EXPECT_EQ(k["run_type"], "iteration");
  EXPECT_EQ(k["time_unit"], "us");
  EXPECT_EQ(k["iterations"], 5);
  EXPECT_DOUBLE_EQ(k["real_time"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(k["sol_fraction"].get<double>(), 0.5);
  EXPECT_GT(k["tflops"].get<double>(), 0);
  EXPECT_FALSE(k.contains("error_occurred"));
  const json& bad = j["benchmarks"][2];
  EXPECT_EQ(bad["name"], "naive/128x4096x7168x2/normal/graph");
  EXPECT_EQ(bad["error_occurred"], true);
  EXPECT_NE(bad["error_message"].get<std::string>().find("incorrect"), std::string::npos);
  // github-action-benchmark charts real_time and ignores error_occurred: a failed case's value is
  // one no passing run can have, so the action alerts against the series' earlier points;
  // compare.py leaves aggregates out of its geometric mean.
  EXPECT_DOUBLE_EQ(bad["real_time"].get<double>(), 1e12);
  EXPECT_EQ(bad["run_type"], "aggregate");
  EXPECT_EQ(bad["aggregate_name"], "failed");
  EXPECT_DOUBLE_EQ(bad["measured_median_us"].get<double>(), 21.5);
}

// A case that failed before any timing still has its entry (under the name
// its passing runs use), and a reference measured once is no benchmark.
TEST(Writers, FailedCasesAlwaysHaveAnEntryAndOneSampleReferencesNone) {
  Fixture f;
  f.info.backend = "host";
  f.cases[0].reference_timing = make_timing("cpu-exact", "reference", fake_measurement({10}, "hot"),
                                            f.cases[0].problem.shape, f.cases[0].bytes);
  f.cases[1].kernel_timing.reset();
  f.cases[1].disposition = Disposition::Error;
  f.cases[1].message = "timed out after 5 s";
  const json g = json::parse(f.render("gbench"));
  ASSERT_EQ(g["benchmarks"].size(), 2u);
  EXPECT_EQ(g["benchmarks"][0]["name"], "naive/128x7168x16384x1/gpumode/cold");
  const json& bad = g["benchmarks"][1];
  EXPECT_EQ(bad["name"], "naive/128x4096x7168x2/normal/hot");
  EXPECT_EQ(bad["error_occurred"], true);
  EXPECT_DOUBLE_EQ(bad["real_time"].get<double>(), 1e12);
  EXPECT_EQ(bad["iterations"], 0);
  const json b = json::parse(f.render("bencher"));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.at("naive/128x4096x7168x2/normal/hot"), (json{{"verification", {{"value", 0}}}}));
}

TEST(Writers, BencherMetricFormatNestsMeasuresUnderBenchmarks) {
  const Fixture f;
  const json j = json::parse(f.render("bencher"));
  // The passing case's kernel and reference are in; the failing case only with its verification
  // measure at 0 (it was dropped entirely).
  ASSERT_EQ(j.size(), 3u);
  const json& bad = j.at("naive/128x4096x7168x2/normal/graph");
  EXPECT_EQ(bad, (json{{"verification", {{"value", 0}}}}));
  EXPECT_EQ(j.at("naive/128x7168x16384x1/gpumode/cold").at("verification").at("value"), 1);
  const json& k = j.at("naive/128x7168x16384x1/gpumode/cold");
  const json& lat = k.at("latency");
  EXPECT_DOUBLE_EQ(lat.at("value").get<double>(), 100e3);  // nanoseconds
  EXPECT_LE(lat.at("lower_value").get<double>(), lat.at("value").get<double>());
  EXPECT_GE(lat.at("upper_value").get<double>(), lat.at("value").get<double>());
  const json& tf = k.at("tflops");
  EXPECT_LE(tf.at("lower_value").get<double>(), tf.at("value").get<double>());
  EXPECT_GE(tf.at("upper_value").get<double>(), tf.at("value").get<double>());
  EXPECT_DOUBLE_EQ(k.at("sol-fraction").at("value").get<double>(), 0.5);
  for (const auto& [bench, measures] : j.items())
    for (const auto& [name, m] : measures.items()) EXPECT_TRUE(m.contains("value")) << bench << name;
}

TEST(Writers, CsvHasOneRowPerTimingWithTheHeaderColumnCount) {
  const Fixture f;
  std::istringstream in(f.render("csv"));
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(split(line, ','));
  ASSERT_EQ(rows.size(), 4u);
  const auto& h = rows[0];
  for (const auto& r : rows) EXPECT_EQ(r.size(), h.size());
  auto col = [&](const char* name) {
    return size_t(std::find(h.begin(), h.end(), name) - h.begin());
  };
  ASSERT_LT(col("median_us"), h.size());
  EXPECT_EQ(rows[1][col("implementation")], "naive");
  EXPECT_DOUBLE_EQ(std::stod(rows[1][col("median_us")]), 100);
  EXPECT_DOUBLE_EQ(std::stod(rows[1][col("sol_fraction")]), 0.5);
  EXPECT_EQ(rows[2][col("implementation")], "\"weird,ref\"\"name\"");
  EXPECT_EQ(rows[2][col("sol_fraction")], "");
  EXPECT_EQ(rows[3][col("disposition")], "incorrect");
  EXPECT_EQ(rows[3][col("l")], "2");
  EXPECT_EQ(rows[3][col("mode")], "graph");
}

TEST(Writers, CsvHasARowForACaseThatFailedBeforeTimingAndTheReferenceHasItsOwnStatus) {
  Fixture f;
  CaseResult c;  // refused before anything ran: no timing at all
  c.problem = {{16, 16, 48, 1}, Dist::GpuMode, 0};
  c.kernel = c.kernel_asked = "k64-host";
  c.reference = "cpu-exact";
  c.disposition = Disposition::NotSupported;
  c.message = "K must be a multiple of 64, here 48";
  f.cases.push_back(c);
  std::istringstream in(f.render("csv"));
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(split(line, ','));
  ASSERT_EQ(rows.size(), 5u);
  const auto& h = rows[0];
  for (const auto& r : rows) EXPECT_EQ(r.size(), h.size());
  auto col = [&](const char* name) {
    return size_t(std::find(h.begin(), h.end(), name) - h.begin());
  };
  ASSERT_LT(col("message"), h.size());
  EXPECT_EQ(rows[1][col("disposition")], "passed");
  EXPECT_EQ(rows[2][col("role")], "reference");
  EXPECT_EQ(rows[2][col("disposition")], "ran");  // not the case's disposition
  EXPECT_EQ(rows[3][col("disposition")], "incorrect");
  EXPECT_EQ(rows[3][col("message")], "3 of 100 checked elements mismatch (0 unwritten)");
  const auto& refused = rows[4];
  EXPECT_EQ(refused[col("implementation")], "k64-host");
  EXPECT_EQ(refused[col("role")], "kernel");
  EXPECT_EQ(refused[col("disposition")], "not_supported");
  EXPECT_EQ(refused[col("name")], "k64-host/16x16x48x1/gpumode/cold");
  EXPECT_EQ(refused[col("samples")], "");
  EXPECT_EQ(refused[col("median_us")], "");
  EXPECT_EQ(refused[col("message")], "\"K must be a multiple of 64, here 48\"");
}

TEST(Writers, MarkdownIsATableWithOneRowPerTiming) {
  const Fixture f;
  std::istringstream in(f.render("md"));
  std::string line;
  std::vector<std::string> table;
  std::string rest;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) == 0) table.push_back(line);
    else rest += line + "\n";
  }
  ASSERT_EQ(table.size(), 2u + 3u);  // header, rule, three timings
  const size_t columns = split(table[0], '|', false).size();
  for (const auto& row : table) EXPECT_EQ(split(row, '|', false).size(), columns) << row;
  EXPECT_NE(table[2].find("| 100.000 |"), std::string::npos) << table[2];
  EXPECT_NE(table[2].find("50.0%"), std::string::npos) << table[2];
  EXPECT_NE(rest.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(rest.find("**incorrect**"), std::string::npos);
  EXPECT_NE(table[2].find("| naive (kernel) |"), std::string::npos) << table[2];
  // A kernel that reports its per-shape configuration shows it in its row.
  Fixture g;
  g.cases[0].kernel_configuration = "two-phase 128x144 split 1 group 16";
  EXPECT_NE(g.render("md").find("| naive (kernel: two-phase 128x144 split 1 group 16) |"), std::string::npos);
}

TEST(Writers, DurationsInTheUnitThatFitsAndSampleCounts) {
  EXPECT_EQ(human_duration(0.81240), "812.40 ns");
  EXPECT_EQ(human_duration(2.614), "2.61 us");
  EXPECT_EQ(human_duration(435), "435.00 us");
  EXPECT_EQ(human_duration(5606.07217), "5.61 ms");
  EXPECT_EQ(human_duration(5606072.17), "5.61 s");  // was "5606072.17 us"
  EXPECT_EQ(sample_count(1), "1 sample");
  EXPECT_EQ(sample_count(3), "3 samples");
}

// Fields that do not apply are absent, not 0: a timing without clock readings (the host
// backend) has no sm_clock_mhz in gbench and an empty one in CSV.
TEST(Writers, NoSmClockWhereNoneWasRead) {
  Fixture f;
  EXPECT_TRUE(json::parse(f.render("gbench"))["benchmarks"][0].contains("sm_clock_mhz"));
  for (auto& c : f.cases) {
    c.kernel_timing->measurement.clock = ClockRecord{};
    if (c.reference_timing) c.reference_timing->measurement.clock = ClockRecord{};
  }
  const json rendered = json::parse(f.render("gbench"));  // alive for the loop below
  for (const json& b : rendered["benchmarks"])
    EXPECT_FALSE(b.contains("sm_clock_mhz")) << b.dump();
  EXPECT_FALSE(json::parse(f.render("gbench"))["context"].contains("mhz_per_cpu"));
  std::istringstream in(f.render("csv"));
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(split(line, ','));
  const size_t col = size_t(std::find(rows[0].begin(), rows[0].end(), "sm_clock_mhz") - rows[0].begin());
  ASSERT_LT(col, rows[0].size());
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][col], "") << i;
}

// Cases that share a name (a sweep over seeds or configurations, a reference timed once per
// kernel) each get their own: Bencher keys by name, so one would overwrite the other.
TEST(Writers, SharedNamesGainWhatSetsThemApart) {
  Fixture f;
  f.cases.resize(1);
  CaseResult seed1 = f.cases[0];
  seed1.problem.seed = 1;
  CaseResult other_config = f.cases[0];
  other_config.kernel_configuration = "tile 64";
  f.cases[0].kernel_configuration = "tile 16";
  CaseResult other_kernel = f.cases[0];
  other_kernel.kernel = "sm90";
  other_kernel.kernel_timing->name = "sm90";
  CaseResult twin = other_kernel;
  f.cases.push_back(seed1);
  f.cases.push_back(other_config);
  f.cases.push_back(other_kernel);
  f.cases.push_back(twin);
  const json g = json::parse(f.render("gbench"));
  std::vector<std::string> names;
  for (const json& b : g["benchmarks"]) names.push_back(b["name"]);
  const std::string k = "naive/128x7168x16384x1/gpumode/cold", r = "weird,ref\"name/128x7168x16384x1/gpumode/cold";
  const std::vector<std::string> want = {
      k + "/seed=0/config=tile_16", r + "/seed=0/with=naive",
      k + "/seed=1", r + "/seed=1",
      k + "/seed=0/config=tile_64", r + "/seed=0/with=naive#2",
      "sm90/128x7168x16384x1/gpumode/cold", r + "/seed=0/with=sm90",
      "sm90/128x7168x16384x1/gpumode/cold#2", r + "/seed=0/with=sm90#2"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(json::parse(f.render("bencher")).size(), want.size());  // none overwritten
  // A single run keeps its plain names.
  const Fixture plain;
  EXPECT_EQ(json::parse(plain.render("gbench"))["benchmarks"][0]["name"], k);
}

// The reader gives the writers what the run gave them: every format of a report read back is
// the format written directly.
TEST(ReportReader, EveryFormatOfTheReadReportIsTheDirectOne) {
  Fixture f;
  CaseResult& a = f.cases[0];
  a.kernel_configuration = "tile 16";
  a.notes = {"a note"};
  a.verdict = VerdictChecks{};
  a.verdict->timed.done = true;
  a.verdict->timed.samples = a.verdict->timed.outputs = 3;
  a.verdict->timed.elements = 768;
  a.verdict->timed.coords = 256;
  a.verdict->floor.known = true;
  a.verdict->floor.floor_s = 5e-6;
  a.speed_of_light = SolResult{};
  a.speed_of_light->known = true;
  a.speed_of_light->gpu = "test GPU";
  a.speed_of_light->sol_s = 50e-6;
  a.speed_of_light->memory_bound = true;
  a.peers.push_back(make_timing("cublaslt-f16", "peer", fake_measurement({50, 51, 52}, "cold"),
                                a.problem.shape, a.bytes, false));
  a.peers.back().kernel_speedup = 0.5;
  TimingResult skipped;
  skipped.name = "cublaslt-fp8";
  skipped.role = "peer";
  skipped.reason = "needs sm_89";
  a.peers.push_back(skipped);
  f.info.device.cc_major = 9;
  f.info.device.sm_count = 132;
  const json report = make_report(f.info, f.cases, false);
  const ReadReport r = read_report(json::parse(report.dump()), "r.json");
  ASSERT_EQ(r.cases.size(), f.cases.size());
  // json is left out: convert passes the report itself through (the model rounds us to s).
  for (const std::string& format : writer_formats()) {
    if (format == "json") continue;
    const auto w = make_writer(format);
    EXPECT_EQ(w->render(r.info, r.cases, false), w->render(f.info, f.cases, false)) << format;
  }
}

TEST(ReportReader, DamagedReportsNameTheFileAndTheKey) {
  const Fixture f;
  const json good = make_report(f.info, f.cases, false);
  const auto message = [&](const std::function<void(json&)>& damage) {
    json j = good;
    damage(j);
    try {
      (void)read_report(j, "r.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message([](json& j) { j["cases"][0]["kernel_timing"]["stats"]["mean_us"] = "x"; }),
            "r.json: cases[0].kernel_timing.stats.mean_us: wrong type; expected a number");
  EXPECT_EQ(message([](json& j) { j["cases"][1]["disposition"] = "bored"; }),
            "r.json: cases[1].disposition: 'bored': unknown; expected passed, incorrect, "
            "not_supported or error");
  EXPECT_EQ(message([](json& j) { j["cases"][0]["problem"]["dist"] = "cauchy"; }),
            "r.json: cases[0].problem.dist: 'cauchy': unknown; expected gpumode or normal");
  EXPECT_EQ(message([](json& j) { j["cases"][0]["peers"] = {7}; }),
            "r.json: cases[0].peers[0]: not an object; expected a timing");
  EXPECT_EQ(message([](json& j) { j["device"]["name"] = 3; }),
            "r.json: device.name: wrong type; expected a string");
  EXPECT_EQ(message([](json& j) { j.erase("cases"); }), "r.json: cases: missing; expected an array");
  EXPECT_EQ(message([](json&) {}), "accepted");
}
