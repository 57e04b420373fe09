// The sweep's machinery: JSONL records (append, torn tails), child processes (exit codes,
// crashes, timeouts that kill the whole process group, interruption), devices, exit codes, merge.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "src/core/error.hpp"
#include "src/report/json_writer.hpp"
#include "src/sweep/child.hpp"
#include "src/sweep/jsonl.hpp"
#include "src/sweep/merge.hpp"
#include "src/sweep/devices.hpp"
#include "src/sweep/progress.hpp"
#include "src/sweep/records.hpp"

using namespace nvfp4;
using namespace nvfp4::sweep;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char t[] = "/tmp/nvfp4-test-sweep-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ChildResult sh(const std::string& script, double timeout_s, const TempDir& d,
               const std::atomic<bool>* stop = nullptr) {
  return run_child({"/bin/sh", "-c", script}, d / "out.log", d / "err.log", timeout_s, stop);
}

// Running, as opposed to gone or a zombie (a container's PID 1 may never reap orphans).
bool alive(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

}  // namespace

TEST(Jsonl, AppendsAndReadsBack) {
  TempDir d;
  const std::string p = d / "r.jsonl";
  {
    JsonlWriter w(p);
    w.append({{"nvfp4bench_sweep", 1}});
    w.append({{"a", 1}, {"s", "x\ny"}});  // a newline inside a string stays escaped
  }
  {
    JsonlWriter w(p);  // reopening appends
    w.append({{"a", 2}});
  }
  const JsonlContents c = read_jsonl(p);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_FALSE(c.torn_tail);
  EXPECT_EQ(c.records[1]["s"], "x\ny");
  EXPECT_EQ(c.records[2]["a"], 2);
  EXPECT_EQ(c.valid_bytes, int64_t(fs::file_size(p)));
  const std::string text = slurp(p);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Jsonl, TornLastLineIsDetectedAndCut) {
  TempDir d;
  const std::string p = d / "r.jsonl";
  {
    JsonlWriter w(p);
    w.append({{"a", 1}});
    w.append({{"a", 2}});
  }
  const auto good = int64_t(fs::file_size(p));
  {
    std::ofstream f(p, std::ios::app);
    f << "{\"a\": 3, \"b\": [1, 2";  // a crash mid-write
  }
  JsonlContents c = read_jsonl(p);
  EXPECT_TRUE(c.torn_tail);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.valid_bytes, good);
  truncate_file(p, c.valid_bytes);
  {
    JsonlWriter w(p);
    w.append({{"a", 3}});
  }
  c = read_jsonl(p);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[2]["a"], 3);
}

TEST(Jsonl, DamageBeforeTheLastLineIsAnError) {
  TempDir d;
  const std::string p = d / "r.jsonl";
  std::ofstream(p) << "{\"a\": 1}\nnot json\n{\"a\": 2}\n";
  try {
    read_jsonl(p);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(Jsonl, ConcurrentAppendsDoNotInterleave) {
  TempDir d;
  const std::string p = d / "r.jsonl";
  JsonlWriter w(p);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) w.append({{"t", t}, {"i", i}, {"pad", std::string(3000, 'x')}});
    });
  for (auto& t : ts) t.join();
  const JsonlContents c = read_jsonl(p);
  EXPECT_EQ(c.records.size(), 100u);
  EXPECT_FALSE(c.torn_tail);
}

TEST(Child, ExitCodesAndOutputs) {
  TempDir d;
  ChildResult r = sh("echo out; echo err >&2; exit 0", 10, d);
  EXPECT_EQ(r.how, ChildResult::How::Exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(slurp(d / "out.log"), "out\n");
  EXPECT_EQ(slurp(d / "err.log"), "err\n");
  for (int code : {1, 2, 3, 42}) {
    r = sh("exit " + std::to_string(code), 10, d);
    EXPECT_EQ(r.how, ChildResult::How::Exited);
    EXPECT_EQ(r.exit_code, code);
    EXPECT_EQ(r.describe(), "exited with code " + std::to_string(code));
  }
}

TEST(Child, CrashIsReportedWithTheSignal) {
  TempDir d;
  const ChildResult r = sh("kill -SEGV $$", 10, d);
  EXPECT_EQ(r.how, ChildResult::How::Signaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "crashed with signal 11 (SIGSEGV)");
  const ChildResult a = sh("kill -ABRT $$", 10, d);
  EXPECT_EQ(a.describe(), "crashed with signal 6 (SIGABRT)");
}

TEST(Child, TimeoutKillsTheWholeProcessGroup) {
  TempDir d;
  const std::string pidfile = d / "grandchild.pid";
  const auto t0 = std::chrono::steady_clock::now();
  // The child starts a grandchild (sleep) and waits: killing only the child would leave it.
  const ChildResult r = sh("sleep 30 & echo $! > " + pidfile + "; wait", 0.3, d);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.how, ChildResult::How::TimedOut);
  EXPECT_EQ(r.describe(), "timed out after 0.3 s");
  EXPECT_GE(r.wall_s, 0.3);
  EXPECT_LT(s, 5.0);
  const pid_t grandchild = std::stoi(slurp(pidfile));
  // The grandchild was reparented; give init a moment to reap it.
  for (int i = 0; i < 100 && alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(grandchild));
}

TEST(Child, StopFlagInterrupts) {
  TempDir d;
  std::atomic<bool> stop{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  const ChildResult r = sh("sleep 30", 0, d, &stop);
  t.join();
  EXPECT_EQ(r.how, ChildResult::How::Interrupted);
  EXPECT_LT(r.wall_s, 5.0);
}

TEST(Child, MissingProgramExits127) {
  TempDir d;
  const ChildResult r = run_child({"/nonexistent/prog"}, d / "o", d / "e", 10, nullptr);
  EXPECT_EQ(r.how, ChildResult::How::Exited);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(slurp(d / "e").find("exec"), std::string::npos);
}

TEST(Sweep, ErrorLineOfLog) {
  EXPECT_EQ(error_line_of_log("nvfp4bench: --k 24: must be a multiple of 16\n"),
            "--k 24: must be a multiple of 16");
  EXPECT_EQ(error_line_of_log("something\nnvfp4bench: the error\n\nlater noise\n"), "the error");
  EXPECT_EQ(error_line_of_log("terminate called\n  what(): boom\n"), "  what(): boom");
  EXPECT_EQ(error_line_of_log(""), "");
}

// A case that left no report is recorded as the json writer records a case: the same keys as a
// real case's record (minus what only a run measures), with what was asked.
TEST(Sweep, SynthesizedRecordIsTheWritersCaseRecord) {
  SweepCase c;
  c.shape = {128, 256, 512, 2};
  c.kernel = "auto";
  c.reference = "cpu-exact";
  c.dist = "normal";
  c.seed = 7;
  c.rtol = 0.5;
  const json r = synthesized_record(c, "not_supported", "why");
  CaseResult model;
  model.bytes = TensorBytes::of(c.shape);
  const json real = to_json(model, false);
  for (auto it = r.begin(); it != r.end(); ++it) EXPECT_TRUE(real.contains(it.key())) << it.key();
  EXPECT_EQ(r.size(), real.size());
  EXPECT_EQ(r["disposition"], "not_supported");
  EXPECT_EQ(r["message"], "why");
  EXPECT_EQ(r["problem"]["dist"], "normal");
  EXPECT_EQ(r["problem"]["seed"], 7);
  EXPECT_EQ(r["problem"]["l"], 2);
  EXPECT_EQ(r["problem"]["bytes"]["c"], model.bytes.c);
  EXPECT_EQ(r["kernel"]["name"], "auto");
  EXPECT_EQ(r["kernel"]["asked"], "auto");
  EXPECT_EQ(r["reference"]["name"], "cpu-exact");
  EXPECT_EQ(r["tolerance"]["rtol"], 0.5);
  EXPECT_EQ(r["tolerance"]["atol"], Tolerance{}.atol);
  EXPECT_EQ(synthesized_record(c, "error", "x")["disposition"], "error");
  c.shape = {int64_t(1) << 40, int64_t(1) << 40, int64_t(1) << 40, 1};  // sizes overflow
  EXPECT_EQ(synthesized_record(c, "error", "x")["problem"]["bytes"]["a"], 0);
}

TEST(Sweep, ResolveDevices) {
  using V = std::vector<std::optional<int>>;
  EXPECT_EQ(resolve_devices("", 0), V{std::nullopt});
  EXPECT_EQ(resolve_devices("", 4), V{std::nullopt});
  EXPECT_EQ(resolve_devices("all", 0), V{std::nullopt});  // the host backend: one worker
  EXPECT_EQ(resolve_devices("all", 3), (V{0, 1, 2}));
  EXPECT_EQ(resolve_devices("1,0", 2), (V{1, 0}));
  for (const auto& [spec, n] : std::vector<std::pair<std::string, int>>{
           {"0", 0}, {"2", 2}, {"0,0", 2}, {"x", 2}, {"-1", 2}, {"0,,1", 2}, {",", 2}}) {
    SCOPED_TRACE(spec);
    try {
      resolve_devices(spec, n);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      EXPECT_NE(std::string(e.what()).find("--devices"), std::string::npos);
    }
  }
  // Without a device a typo is still named as one, not as "no CUDA device here"; and the
  // number rule holds (no spaces, no sign).
  for (const char* spec : {"x", "0,x", " 0", "+1", "1 "}) {
    SCOPED_TRACE(spec);
    try {
      resolve_devices(spec, 0);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a device ordinal"), std::string::npos) << e.what();
    }
  }
}

TEST(Sweep, ExitCodes) {
  auto cases = [](std::initializer_list<const char*> ds) {
    json a = json::array();
    for (const char* d : ds) a.push_back({{"disposition", d}});
    return a;
  };
  EXPECT_EQ(exit_code_for(cases({"passed", "passed"}), true), 0);
  EXPECT_EQ(exit_code_for(cases({"passed", "incorrect", "error"}), true), 1);
  EXPECT_EQ(exit_code_for(cases({"passed", "error", "not_supported"}), true), 3);
  EXPECT_EQ(exit_code_for(cases({"passed", "not_supported"}), true), 2);
  EXPECT_EQ(exit_code_for(cases({"passed"}), false), 3);  // cases missing
  EXPECT_EQ(disposition_counts(cases({"passed", "error", "error"}))["error"], 2);
}

namespace {

json shard_report(int index, int count, int total, const std::string& hash = "fnv1a64:00") {
  json cases = json::array();
  for (int i = index; i < total; i += count)
    cases.push_back({{"problem", {{"m", 16}, {"n", 16}, {"k", 64}, {"l", 1}, {"dist", "gpumode"}, {"seed", i}}},
                     {"kernel", {{"name", "host"}}},
                     {"reference", {{"name", "cpu-exact"}}},
                     {"disposition", "passed"},
                     {"message", ""},
                     {"kernel_timing", {{"ran", true}}},
                     {"verification", {{"passed", true}}},
                     {"sweep", {{"index", i}}}});
  return {{"hostname", "h" + std::to_string(index)},
          {"device", {{"name", "GPU"}}},
          {"sweep",
           {{"config_hash", hash},
            {"cases_in_config", total},
            {"complete", true},
            {"shard", {{"index", index}, {"count", count}}},
            {"interrupted", nullptr}}},
          {"cases", cases}};
}

std::string merge_error(const std::vector<std::pair<std::string, json>>& in) {
  try {
    merge_reports(in);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  ADD_FAILURE() << "merged";
  return {};
}

}  // namespace

TEST(Merge, JoinsShardsInCaseOrder) {
  const json m = merge_reports({{"b.json", shard_report(1, 3, 10)},
                                {"a.json", shard_report(0, 3, 10)},
                                {"c.json", shard_report(2, 3, 10)}});
  ASSERT_EQ(m["cases"].size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(m["cases"][size_t(i)]["sweep"]["index"], i);
  EXPECT_TRUE(m["sweep"]["complete"].get<bool>());
  EXPECT_TRUE(m["sweep"]["shard"].is_null());
  EXPECT_EQ(m["sweep"]["merged_from"].size(), 3u);
  EXPECT_EQ(m["sweep"]["counts"]["passed"], 10);
  EXPECT_EQ(exit_code_for(m["cases"], true), 0);

  const json part =
      merge_reports({{"a.json", shard_report(0, 3, 10)}, {"c.json", shard_report(2, 3, 10)}});
  EXPECT_EQ(part["cases"].size(), 7u);
  EXPECT_FALSE(part["sweep"]["complete"].get<bool>());
  EXPECT_EQ(part["sweep"]["missing"], json({1, 4, 7}));
  EXPECT_EQ(m["sweep"]["missing"], json::array());
}

TEST(Merge, ChecksIndicesAgainstTheConfigNotByCount) {
  // Every index shifted by 90: as many cases as the config has, none of them its cases.
  json shifted = shard_report(1, 2, 6);
  for (auto& c : shifted["cases"]) c["sweep"]["index"] = c["sweep"]["index"].get<int>() + 90;
  EXPECT_NE(merge_error({{"a.json", shard_report(0, 2, 6)}, {"b.json", shifted}})
                .find("b.json: cases[0].sweep.index 91: not a case of shard 1/2 of a config with 6 cases"),
            std::string::npos);
  // A case of another shard inside a shard's report.
  json stray = shard_report(1, 2, 6);
  stray["cases"][0]["sweep"]["index"] = 2;
  EXPECT_NE(merge_error({{"b.json", stray}}).find("cases[0].sweep.index 2: not a case of shard 1/2"),
            std::string::npos);
  json big = shard_report(1, 2, 6);
  big["sweep"]["shard"]["index"] = 5;
  EXPECT_NE(merge_error({{"b.json", big}}).find("b.json: sweep.shard 5/2: expected 0 <= index < count"),
            std::string::npos);
  // Damaged keys are named, never a json exception.
  json hash = shard_report(0, 1, 2);
  hash["sweep"]["config_hash"] = 12345;
  EXPECT_EQ(merge_error({{"h.json", hash}}), "h.json: sweep.config_hash: wrong type; expected a string");
  json disp = shard_report(0, 1, 2);
  disp["cases"][1]["disposition"] = 7;
  EXPECT_EQ(merge_error({{"d.json", disp}}), "d.json: cases[1].disposition: wrong type; expected a string");
  // A merged report is not a shard.
  const json merged = merge_reports({{"a.json", shard_report(0, 2, 6)}});
  EXPECT_NE(merge_error({{"m.json", merged}, {"b.json", shard_report(1, 2, 6)}})
                .find("m.json: a merged report (sweep.merged_from)"),
            std::string::npos);
}

TEST(Merge, RejectsReportsThatDoNotBelongTogether) {
  EXPECT_NE(merge_error({{"a.json", shard_report(0, 2, 6)},
                         {"b.json", shard_report(1, 2, 6, "fnv1a64:11")}})
                .find("b.json: config hash fnv1a64:11 differs"),
            std::string::npos);
  EXPECT_NE(merge_error({{"a.json", shard_report(0, 2, 6)}, {"b.json", shard_report(0, 2, 6)}})
                .find("b.json: shard 0/2 is given twice"),
            std::string::npos);
  EXPECT_NE(merge_error({{"a.json", shard_report(0, 2, 6)}, {"b.json", shard_report(1, 3, 6)}})
                .find("does not fit"),
            std::string::npos);
  EXPECT_NE(
      merge_error({{"a.json", json{{"cases", json::array()}}}}).find("a.json: sweep: missing; expected an object"),
      std::string::npos);
}

// A finished case's time in the unit that fits: a 23 s case is "23.32 s", not "23320722.92 us".
TEST(Sweep, ProgressLinesSayTimesInTheirUnit) {
  SweepCase c;
  c.shape = {16, 16, 64, 1};
  for (const auto& [median_us, shown] : std::vector<std::pair<double, std::string>>{
           {23320722.92, "host 23.32 s"}, {4015.15, "host 4.02 ms"}, {81.41, "host 81.41 us"}}) {
    const json rec = {{"disposition", "passed"},
                      {"kernel", {{"name", "host"}}},
                      {"kernel_timing", {{"ran", true}, {"stats", {{"median_us", median_us}}}}}};
    testing::internal::CaptureStdout();
    {
      Progress p(ProgressMode::Lines, 1, 0);
      p.finished(c, 0, rec);
    }
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find(": " + shown + " |"), std::string::npos) << out;
  }
}
