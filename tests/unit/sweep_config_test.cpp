// Sweep configs: valid files, errors with the file and JSON path, axis expansion, overrides,
// the config hash, shard arithmetic.
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <string>

#include "src/core/error.hpp"
#include "src/sweep/config.hpp"

using namespace nvfp4;
using namespace nvfp4::sweep;

namespace {

SweepConfig parse(const std::string& text) { return parse_config_text(text, "x.json"); }

// The one-line message of a config that must be rejected with exit code 2.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

}  // namespace

TEST(SweepConfig, ExplicitShapeWithDefaults) {
  const auto c = parse(R"({"name": "t", "cases": [{"shape": {"m": 128, "n": 256, "k": 512}}]})");
  EXPECT_EQ(c.name, "t");
  ASSERT_EQ(c.cases.size(), 1u);
  const SweepCase& s = c.cases[0];
  EXPECT_EQ(s.shape.m, 128);
  EXPECT_EQ(s.shape.n, 256);
  EXPECT_EQ(s.shape.k, 512);
  EXPECT_EQ(s.shape.l, 1);  // L defaults to 1
  EXPECT_EQ(s.kernel, "auto");
  EXPECT_EQ(s.reference, "auto");
  EXPECT_EQ(s.dist, "gpumode");
  EXPECT_EQ(s.seed, 0u);
  EXPECT_FALSE(s.iters.has_value());  // the single-run default applies
  const std::vector<std::string> args = {
      "--m",    "128", "--n",    "256",     "--k",      "512",  "--l",         "1",
      "--seed", "0",   "--dist", "gpumode", "--kernel", "auto", "--reference", "auto"};
  EXPECT_EQ(s.run_args(), args);
}

TEST(SweepConfig, RangesAndProductsExpandInOrder) {
  const auto c = parse(R"({"cases": [{"name": "p", "axes": {
      "m": [1, 2], "n": {"from": 16, "to": 48, "step": 16}, "k": {"from": 64, "to": 512, "times": 2},
      "l": 3}, "seeds": {"from": 5, "to": 6, "step": 1}}]})");
  // 2 m x 3 n x 4 k x 1 l x 2 seeds
  ASSERT_EQ(c.cases.size(), 48u);
  EXPECT_EQ(c.cases[0].shape.n, 16);
  EXPECT_EQ(c.cases[0].seed, 5u);
  EXPECT_EQ(c.cases[1].seed, 6u);  // seeds vary fastest
  EXPECT_EQ(c.cases[1].shape.k, 64);
  EXPECT_EQ(c.cases[2].shape.k, 128);  // then k: 64, 128, 256, 512
  EXPECT_EQ(c.cases[7].shape.k, 512);
  EXPECT_EQ(c.cases[8].shape.n, 32);  // then n: 16, 32, 48
  EXPECT_EQ(c.cases[24].shape.m, 2);  // m outermost
  for (size_t i = 0; i < c.cases.size(); ++i) {
    EXPECT_EQ(c.cases[i].index, int64_t(i));
    EXPECT_EQ(c.cases[i].shape.l, 3);
    EXPECT_EQ(c.cases[i].name, "p");
  }
  // A range that does not land on `to` stops below it.
  const auto d =
      parse(R"({"cases": [{"axes": {"m": {"from": 10, "to": 35, "step": 10}, "n": 8, "k": 16}}]})");
  ASSERT_EQ(d.cases.size(), 3u);
  EXPECT_EQ(d.cases[2].shape.m, 30);
}

TEST(SweepConfig, CaseKeysOverrideDefaults) {
  const auto c = parse(R"({
    "defaults": {"kernels": ["naive"], "references": ["cpu-exact"], "dists": ["normal"],
                 "seeds": [7], "warmup": 2, "iters": 9, "flush": true, "rtol": 0.01, "atol": 0.02,
                 "verify_sample": 100, "timeout_s": 30, "peers": ["p1", "p2"]},
    "cases": [
      {"shape": {"m": 16, "n": 16, "k": 64}},
      {"shape": {"m": 32, "n": 16, "k": 64}, "kernels": ["host", "naive"], "dists": ["gpumode"],
       "seeds": [1, 2], "iters": 1, "flush": false, "timeout_s": 0.5, "peers": [], "mode": "hot"},
      {"shape": {"m": 48, "n": 16, "k": 64}, "peers": "all"}]})");
  ASSERT_EQ(c.cases.size(), 1u + 4u + 1u);
  const SweepCase& a = c.cases[0];
  EXPECT_EQ(a.kernel, "naive");
  EXPECT_EQ(a.reference, "cpu-exact");
  EXPECT_EQ(a.dist, "normal");
  EXPECT_EQ(a.seed, 7u);
  EXPECT_EQ(a.warmup, 2);
  EXPECT_EQ(a.iters, 9);
  EXPECT_EQ(a.verify_sample, 100);
  EXPECT_EQ(a.timeout_s, 30.0);
  EXPECT_EQ(a.peers, (std::vector<std::string>{"p1", "p2"}));
  const auto args = a.run_args();
  const std::string joined = [&] {
    std::string s;
    for (auto& x : args) s += x + " ";
    return s;
  }();
  EXPECT_NE(joined.find("--peers p1,p2 "), std::string::npos) << joined;
  EXPECT_NE(joined.find("--rtol 0.01 "), std::string::npos) << joined;
  EXPECT_NE(joined.find("--verify-sample 100 "), std::string::npos) << joined;
  EXPECT_EQ(joined.find("--no-flush"), std::string::npos) << joined;
  EXPECT_EQ(joined.find("--mode"), std::string::npos) << joined;
  // The second entry: 2 kernels x 2 seeds; its own keys win, the rest comes from defaults.
  EXPECT_EQ(c.cases[1].kernel, "host");
  EXPECT_EQ(c.cases[1].seed, 1u);
  EXPECT_EQ(c.cases[2].seed, 2u);
  EXPECT_EQ(c.cases[3].kernel, "naive");
  for (int i = 1; i <= 4; ++i) {
    const SweepCase& b = c.cases[size_t(i)];
    EXPECT_EQ(b.dist, "gpumode");
    EXPECT_EQ(b.iters, 1);
    EXPECT_EQ(b.warmup, 2);
    EXPECT_EQ(b.reference, "cpu-exact");
    EXPECT_TRUE(b.peers.empty());  // [] overrides the defaults' peers
    EXPECT_EQ(b.timeout_s, 0.5);
    const auto ba = b.run_args();
    EXPECT_NE(std::find(ba.begin(), ba.end(), "--no-flush"), ba.end());
    const auto mode = std::find(ba.begin(), ba.end(), "--mode");
    ASSERT_NE(mode, ba.end());
    EXPECT_EQ(*(mode + 1), "hot");
    EXPECT_EQ(std::find(ba.begin(), ba.end(), "--peers"), ba.end());
  }
  EXPECT_EQ(c.cases[5].peers, (std::vector<std::string>{"all"}));
}

TEST(SweepConfig, FlushAndModeThatDisagreeAndUnknownNamesAreRefusedAtParseTime) {
  // Inherited flush: false against a case's mode: the case's key is named.
  EXPECT_EQ(error_of(R"({"defaults": {"flush": false},
                        "cases": [{"shape": {"m": 16, "n": 16, "k": 64}},
                                  {"shape": {"m": 16, "n": 16, "k": 64}, "mode": "rotate"}]})"),
            "x.json: cases[1].mode: mode 'rotate' conflicts with flush: false (no flush is mode hot); "
            "give one of them");
  EXPECT_EQ(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "mode": "hot", "flush": true}]})"),
            "x.json: cases[0].mode: mode 'hot' conflicts with flush: true (hot is the mode without a "
            "flush); give one of them");
  EXPECT_NE(error_of(R"({"defaults": {"kernels": ["auto", "nope"]},
                        "cases": [{"shape": {"m": 16, "n": 16, "k": 64}}]})")
                .find("x.json: defaults.kernels[1]: 'nope' is not a kernel; expected auto or one of: "),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "references": ["nope"]}]})")
                .find("x.json: cases[0].references[0]: 'nope' is not a reference"),
            std::string::npos);
  // What agrees passes: no flush with hot, a flush with the other modes.
  EXPECT_EQ(parse(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "mode": "hot", "flush": false},
                               {"shape": {"m": 16, "n": 16, "k": 64}, "mode": "rotate", "flush": true}]})")
                .cases.size(), 2u);
}

TEST(SweepConfig, UnknownKeysNameTheirPath) {
  EXPECT_EQ(error_of(R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}},
                                   {"shape": {"m": 1, "n": 1, "k": 16}},
                                   {"shape": {"m": 1, "n": 1, "k": 16, "mm": 2}}]})"),
            "x.json: cases[2].shape.mm: unknown key (expected one of: m, n, k, l)");
  EXPECT_NE(error_of(R"({"casez": []})").find("x.json: casez: unknown key"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"defaults": {"iter": 3}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})")
          .find("x.json: defaults.iter: unknown key"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}, "kernel": ["a"]}]})")
                .find("x.json: cases[0].kernel: unknown key"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"cases": [{"axes": {"m": {"from": 1, "to": 2, "stp": 1}, "n": 1, "k": 16}}]})")
          .find("x.json: cases[0].axes.m.stp: unknown key"),
      std::string::npos);
}

TEST(SweepConfig, WrongTypesAreOneLineErrors) {
  struct Bad {
    const char* text;
    const char* expect;
  } const bad[] = {
      {R"({"cases": [{"shape": {"m": "128", "n": 1, "k": 16}}]})",
       "x.json: cases[0].shape.m: expected a positive integer, got a string \"128\""},
      {R"({"cases": [{"shape": {"m": 1.5, "n": 1, "k": 16}}]})",
       "cases[0].shape.m: expected a positive integer, got a number"},
      {R"({"cases": [{"shape": {"m": 0, "n": 1, "k": 16}}]})",
       "cases[0].shape.m: 0 is out of range: must be >= 1"},
      {R"({"cases": [{"shape": {"m": 1, "k": 16}}]})", "cases[0].shape.n: missing"},
      {R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}, "kernels": "naive"}]})",
       "cases[0].kernels: expected a non-empty list of strings, got a string"},
      {R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}, "dists": ["uniform"]}]})",
       "cases[0].dists[0]: 'uniform' is not a distribution"},
      {R"({"defaults": {"iters": -1}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults.iters: -1 is out of range: must be >= 0"},
      {R"({"defaults": {"mode": "warm"}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults.mode: 'warm' is not a timing mode (expected one of: cold, hot, rotate, graph)"},
      {R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 24}}]})",
       "x.json: cases[0].shape.k: 24 is not a multiple of 16"},
      {R"({"cases": [{"axes": {"m": 1, "n": 1, "k": {"from": 16, "to": 64, "step": 8}}}]})",
       "cases[0].axes.k: 24 is not a multiple of 16"},
      {R"({"defaults": {"flush": "no"}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults.flush: expected true or false"},
      {R"({"defaults": {"timeout_s": 0}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults.timeout_s: 0 is out of range: must be > 0"},
      {R"({"defaults": {"peers": "some"}, "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults.peers: expected a list of peer names or \"all\""},
      {R"({"defaults": [], "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})",
       "defaults: expected an object, got a list"},
      {R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}, "axes": {"m": 1, "n": 1, "k": 16}}]})",
       "cases[0]: a case needs exactly one of shape"},
      {R"({"cases": [{"name": "x"}]})", "cases[0]: a case needs exactly one of shape"},
      {R"({"cases": [{"axes": {"m": [], "n": 1, "k": 16}}]})", "cases[0].axes.m: empty list"},
      {R"({"cases": [{"axes": {"m": {"from": 4, "to": 2, "step": 1}, "n": 1, "k": 16}}]})",
       "cases[0].axes.m.to: 2 is below from (4)"},
      {R"({"cases": [{"axes": {"m": {"from": 1, "to": 9, "step": 1, "times": 2}, "n": 1, "k": 16}}]})",
       "cases[0].axes.m: a range needs exactly one of step"},
      {R"({"cases": [{"axes": {"m": {"from": 1, "to": 9, "times": 1}, "n": 1, "k": 16}}]})",
       "cases[0].axes.m.times: 1 is out of range"},
      {R"({"cases": [{"axes": {"m": {"from": 1, "to": 100000000, "step": 1}, "n": 1, "k": 16}}]})",
       "more than 100000"},
      {R"({"cases": [{"axes": {"m": {"from": 1, "to": 1000, "step": 1}, "n": {"from": 1, "to": 1000, "step": 1}, "k": 16}}]})",
       "cases[0]: the config expands to more than 100000 cases"},
      {R"({"cases": {}})", "cases: expected a non-empty list of cases, got an object"},
      {R"([1, 2])", "x.json: (top level): expected an object, got a list"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.text);
    const std::string e = error_of(b.text);
    EXPECT_NE(e.find(b.expect), std::string::npos) << e;
  }
}

// Seeds have --seed's range, 0 to 2^64-1 (a recheck's seed, printed in a report, is one of
// them); sizes stay within int64.
TEST(SweepConfig, SeedsSpanTheCommandLinesRange) {
  const auto c = parse(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64},
                                      "seeds": [0, 18446744073709551615]}]})");
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[1].seed, 18446744073709551615ull);
  const auto r = parse(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64},
      "seeds": {"from": 18446744073709551613, "to": 18446744073709551615, "step": 1}}]})");
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[2].seed, 18446744073709551615ull);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "seeds": [-1]}]})")
                .find("cases[0].seeds[0]: -1 is out of range: must be >= 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 9223372036854775808, "n": 16, "k": 64}}]})")
                .find("cases[0].shape.m: 9223372036854775808 is too large (at most 9223372036854775807)"),
            std::string::npos);
}

TEST(SweepConfig, EmptyOrMissingCases) {
  EXPECT_EQ(error_of(R"({"cases": []})"), "x.json: cases: empty: a sweep needs at least one case");
  EXPECT_NE(error_of(R"({"name": "n"})").find("x.json: cases: missing"), std::string::npos);
}

TEST(SweepConfig, NotJson) {
  const std::string e = error_of("{\"cases\": [\n  {\"shape\": }\n]}");
  EXPECT_EQ(e.rfind("x.json: not JSON: ", 0), 0u) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  try {
    load_config("/nonexistent/c.json");
    ADD_FAILURE();
  } catch (const Error& err) {
    EXPECT_EQ(err.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(err.what()).find("/nonexistent/c.json: cannot be read"),
              std::string::npos);
  }
}

// A key given twice is refused on one line, the key spelt as JSON (regression: a fuzzer's
// "sha\npe" given twice printed a raw newline; fuzz/corpus/sweep/duplicate-newline-key.json).
TEST(SweepConfig, DuplicateKeyIsOneLine) {
  EXPECT_EQ(error_of(R"({"cases": [{"sha\npe": 6, "sha\npe": 6}]})"),
            R"(x.json: not JSON: key "sha\npe" appears twice in one object)");
  EXPECT_EQ(error_of(R"({"cases": [], "cases": []})"), R"(x.json: not JSON: key "cases" appears twice in one object)");
}

TEST(SweepConfig, HashFollowsTheCasesNotTheComments) {
  const auto a =
      parse(R"({"name": "a", "notes": "x", "cases": [{"shape": {"m": 1, "n": 1, "k": 16}}]})");
  const auto b = parse(
      R"({"name": "b", "notes": ["y", "z"], "cases": [{"name": "c", "shape": {"m": 1, "n": 1, "k": 16}, "timeout_s": 3}]})");
  const auto c = parse(R"({"cases": [{"shape": {"m": 1, "n": 1, "k": 16}, "seeds": [1]}]})");
  EXPECT_EQ(a.hash, b.hash);  // names, notes and timeouts do not change what is measured
  EXPECT_NE(a.hash, c.hash);
  EXPECT_EQ(a.hash.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(a.hash.size(), 8u + 16u);
  EXPECT_EQ(fnv1a64_hex(""), "fnv1a64:cbf29ce484222325");   // the FNV-1a offset basis
  EXPECT_EQ(fnv1a64_hex("a"), "fnv1a64:af63dc4c8601ec8c");  // published test vector
}

TEST(SweepShard, EveryCaseInExactlyOneShard) {
  std::vector<SweepCase> cases(23);
  for (size_t i = 0; i < cases.size(); ++i) cases[i].index = int64_t(i);
  for (int n : {1, 2, 3, 5, 23, 30}) {
    std::vector<int> seen(cases.size(), 0);
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const auto part =
          select_shard(cases, parse_shard(std::to_string(i) + "/" + std::to_string(n)));
      total += part.size();
      for (const auto& c : part) {
        ++seen[size_t(c.index)];
        EXPECT_EQ(c.index % n, i);
      }
      // Shards are balanced to within one case.
      EXPECT_LE(part.size(), (cases.size() + size_t(n) - 1) / size_t(n));
      EXPECT_GE(part.size(), cases.size() / size_t(n));
    }
    EXPECT_EQ(total, cases.size());
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

TEST(SweepShard, BadShardSpecs) {
  // Spaces and signs are refused as in every other number of the command line.
  for (const char* bad : {"", "1", "2/2", "-1/2", "0/0", "a/b", "1/2x", "1//2", " 0/2", "0/ 2",
                          "+0/2", "0/2 ", "0x0/2"}) {
    SCOPED_TRACE(bad);
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitBadInput);
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos);
    }
  }
  const Shard s = parse_shard("3/4");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
}

TEST(SweepConfig, ShippedConfigsParse) {
  const std::string dir = NVFP4_SOURCE_DIR "/configs/";
  const auto g = load_config(dir + "gpumode-nvfp4-gemm.json");
  ASSERT_EQ(g.cases.size(), 13u);  // 10 test shapes + 3 benchmark shapes
  EXPECT_EQ(g.cases[10].shape.m, 128);
  EXPECT_EQ(g.cases[10].shape.n, 7168);
  EXPECT_EQ(g.cases[10].shape.k, 16384);
  for (const auto& c : g.cases) EXPECT_EQ(c.shape.k % 256, 0);
  const auto l = load_config(dir + "llm-layers.json");
  EXPECT_GE(l.cases.size(), 20u);
  for (const auto& c : l.cases) EXPECT_EQ(c.shape.k % 16, 0);
  const auto s = load_config(dir + "smoke.json");
  EXPECT_GE(s.cases.size(), 4u);
  for (const auto& c : s.cases)
    EXPECT_LE(c.shape.m * c.shape.n * c.shape.k * c.shape.l, 64 * 64 * 256);
}

// warmup_time: the warm-up's seconds (--warmup-time), in the case's command line and params
// when given; a config without it keeps its hash; a negative or non-number value is refused at
// its path.
TEST(SweepConfig, WarmupTimeReachesTheRunAndTheHash) {
  const char* plain = R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}}]})";
  const auto a = parse(plain);
  EXPECT_FALSE(a.cases[0].warmup_time);
  EXPECT_FALSE(a.cases[0].params().contains("warmup_time"));
  const auto a_args = a.cases[0].run_args();
  EXPECT_EQ(std::find(a_args.begin(), a_args.end(), "--warmup-time"), a_args.end());
  const auto b = parse(R"({"defaults": {"warmup": 0, "warmup_time": 0},
                           "cases": [{"shape": {"m": 16, "n": 16, "k": 64}},
                                     {"shape": {"m": 16, "n": 16, "k": 64}, "warmup_time": 0.25}]})");
  ASSERT_EQ(b.cases.size(), 2u);
  EXPECT_EQ(b.cases[0].warmup_time, 0.0);
  EXPECT_EQ(b.cases[1].warmup_time, 0.25);  // a case's own key wins
  EXPECT_EQ(b.cases[1].params()["warmup_time"], 0.25);
  for (const auto& [c, want] : {std::pair{&b.cases[0], "0"}, std::pair{&b.cases[1], "0.25"}}) {
    const auto args = c->run_args();
    const auto it = std::find(args.begin(), args.end(), "--warmup-time");
    ASSERT_NE(it, args.end());
    EXPECT_EQ(*(it + 1), want);
  }
  EXPECT_NE(b.hash, parse(R"({"defaults": {"warmup": 0},
                              "cases": [{"shape": {"m": 16, "n": 16, "k": 64}},
                                        {"shape": {"m": 16, "n": 16, "k": 64}}]})").hash);
  EXPECT_NE(error_of(R"({"defaults": {"warmup_time": -1}, "cases": [{"shape": {"m": 16, "n": 16, "k": 64}}]})")
                .find("defaults.warmup_time: -1 is out of range: must be >= 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "warmup_time": "1s"}]})")
                .find("cases[0].warmup_time: expected a number, got a string \"1s\""),
            std::string::npos);
}

// kernel_config: one named configuration goes to the case's command line, its params and so the
// hash; a config without the key hashes as before the key existed; "all" needs a kernel with a
// choice (the built-in naive kernel has none; plugins with one: tests/cli/plugin_test.py).
TEST(SweepConfig, KernelConfigIsMeasuredAndHashed) {
  const char* plain = R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["host"]}]})";
  const auto a = parse(plain);
  EXPECT_FALSE(a.cases[0].params().contains("kernel_config"));
  EXPECT_EQ(a.cases[0].kernel_config, "");
  const auto b = parse(R"({"defaults": {"kernel_config": "tile 16"},
                           "cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["host"]}]})");
  EXPECT_EQ(b.cases[0].kernel_config, "tile 16");
  EXPECT_EQ(b.cases[0].params()["kernel_config"], "tile 16");
  EXPECT_NE(a.hash, b.hash);
  const auto args = b.cases[0].run_args();
  const auto it = std::find(args.begin(), args.end(), "--kernel-config");
  ASSERT_NE(it, args.end());
  EXPECT_EQ(*(it + 1), "tile 16");
  EXPECT_NE(b.cases[0].label().find("config tile 16"), std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernel_config": ""}]})").find("cases[0].kernel_config: expected a non-empty string"), std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernel_config": "all"}]})").find("cases[0].kernel_config: \"all\" needs named kernels"), std::string::npos);
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["nope"],
                                "kernel_config": "all"}]})").find("cases[0].kernels[0]: 'nope' is not a kernel"), std::string::npos);  // refused before "all" is expanded
  EXPECT_NE(error_of(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["naive"],
                                "kernel_config": "all"}]})").find("\"all\": kernel 'naive' lists no configurations for 16x16x64 L=1"), std::string::npos);
  // The host kernel's choice is the instruction sets this CPU runs: one case each.
  const auto h = parse(R"({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["host"],
                           "kernel_config": "all"}]})");
  ASSERT_GE(h.cases.size(), 1u);
  EXPECT_EQ(h.cases.back().kernel_config, "generic");
}
