// A sweep's cases: what each measures (params, the config hash), its command line, and shards.
#include "src/sweep/config.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "src/core/error.hpp"
#include "src/core/fnv.hpp"
#include "src/core/number_text.hpp"
#include "src/core/text.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

namespace {

std::string fmt_double(double x) { return fmt::format("{}", x); }

}  // namespace

json SweepCase::params() const {
  json j = {{"m", shape.m}, {"n", shape.n},     {"k", shape.k},
            {"l", shape.l}, {"kernel", kernel}, {"reference", reference},
            {"dist", dist}, {"seed", seed},     {"peers", peers}};
  if (warmup) j["warmup"] = *warmup;
  if (warmup_time) j["warmup_time"] = *warmup_time;
  if (iters) j["iters"] = *iters;
  if (flush) j["flush"] = *flush;
  if (mode) j["mode"] = *mode;
  if (rtol) j["rtol"] = *rtol;
  if (atol) j["atol"] = *atol;
  if (verify_sample) j["verify_sample"] = *verify_sample;
  // Only when set: a config without the key hashes as it did before the key existed.
  if (!kernel_config.empty()) j["kernel_config"] = kernel_config;
  // Names and timeout_s are left out: a renamed case or a longer limit is the same measurement.
  return j;
}

std::string SweepCase::label() const {
  std::string s = name.empty() ? "" : name + " ";
  s += fmt::format("{}x{}x{} L={} {}/{} {} seed {}", shape.m, shape.n, shape.k, shape.l, kernel,
                   reference, dist, seed);
  if (!kernel_config.empty()) s += " config " + kernel_config;
  if (!peers.empty()) s += " peers " + join(peers, ",");
  return s;
}

std::vector<std::string> SweepCase::run_args() const {
  std::vector<std::string> a = {"--m",         std::to_string(shape.m),
                                "--n",         std::to_string(shape.n),
                                "--k",         std::to_string(shape.k),
                                "--l",         std::to_string(shape.l),
                                "--seed",      std::to_string(seed),
                                "--dist",      dist,
                                "--kernel",    kernel,
                                "--reference", reference};
  if (!kernel_config.empty()) a.insert(a.end(), {"--kernel-config", kernel_config});
  if (!peers.empty()) a.insert(a.end(), {"--peers", join(peers, ",")});
  if (warmup) a.insert(a.end(), {"--warmup", std::to_string(*warmup)});
  if (warmup_time) a.insert(a.end(), {"--warmup-time", fmt_double(*warmup_time)});
  if (iters) a.insert(a.end(), {"--iters", std::to_string(*iters)});
  if (flush && !*flush) a.push_back("--no-flush");
  if (mode) a.insert(a.end(), {"--mode", *mode});
  if (rtol) a.insert(a.end(), {"--rtol", fmt_double(*rtol)});
  if (atol) a.insert(a.end(), {"--atol", fmt_double(*atol)});
  if (verify_sample) a.insert(a.end(), {"--verify-sample", std::to_string(*verify_sample)});
  return a;
}

std::string fnv1a64_hex(const std::string& bytes) {
  Fnv64 h;
  for (unsigned char c : bytes) h.mix(c);
  return fmt::format("fnv1a64:{:016x}", h.h);
}

std::string config_hash(const std::vector<SweepCase>& cases) {
  json all = json::array();
  for (const auto& sc : cases) all.push_back(sc.params());
  return fnv1a64_hex(all.dump());
}

Shard parse_shard(const std::string& text) {
  const auto bad = [&] {
    return usage_error(fmt::format("--shard '{}': expected i/n with 0 <= i < n (e.g. 0/4)", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  // Both numbers as every number of the command line is read (src/core/number_text.hpp).
  if (!integer_text_problem<int>(text.substr(0, slash), &s.index).empty() ||
      !integer_text_problem<int>(text.substr(slash + 1), &s.count).empty())
    throw bad();
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

bool in_shard(int64_t case_index, const Shard& s) { return case_index % s.count == s.index; }

std::vector<SweepCase> select_shard(const std::vector<SweepCase>& cases, const Shard& s) {
  std::vector<SweepCase> out;
  for (const auto& c : cases)
    if (in_shard(c.index, s)) out.push_back(c);
  return out;
}

}  // namespace nvfp4::sweep
