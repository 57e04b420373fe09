// Sweep configs (docs/sweeps.md, "Sweep configs"; schema configs/sweep.schema.json): parsing with errors
// that name the file and the JSON path, expansion of axes into cases, the config hash, shards.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4::sweep {

// One expanded case: everything the single-run command line needs.
struct SweepCase {
  int64_t index = 0;  // position in the whole expanded config (shards keep it)
  std::string name;   // the config entry's name; may be empty
  Shape shape;
  std::string kernel = "auto", reference = "auto", dist = "gpumode";
  std::string kernel_config;  // --kernel-config; empty: the kernel's own choice
  uint64_t seed = 0;
  std::vector<std::string> peers;  // empty: none; {"all"}: every peer
  // Unset: the single-run defaults (which depend on the backend).
  std::optional<int> warmup, iters;
  std::optional<double> warmup_time;  // --warmup-time, seconds
  std::optional<bool> flush;        // false: --no-flush (hot)
  std::optional<std::string> mode;  // --mode cold|hot|rotate|graph
  std::optional<double> rtol, atol;
  std::optional<int64_t> verify_sample;
  std::optional<double> timeout_s;  // per-case timeout of an isolated child

  // What is measured, canonically (stored in records, hashed into the config hash); the name and
  // timeout_s are not part of it.
  nlohmann::json params() const;
  // One line for progress output: "gemm-1 128x256x256 L=1 auto/auto gpumode seed 0".
  std::string label() const;
  // The single-run command line (no program name, --json or --device).
  std::vector<std::string> run_args() const;
};

struct SweepConfig {
  std::string path;  // as given
  std::string name, description;
  std::vector<SweepCase> cases;
  std::string hash;  // "fnv1a64:<16 hex>" of the expanded cases
};

// Upper bound on the expanded case count: a typo in a range should fail fast, not run for days.
constexpr int64_t kMaxCases = 100000;

// Throws usage_error with one line "<where>: <json path>: <problem>".
SweepConfig parse_config(const nlohmann::json& j, const std::string& where);
SweepConfig parse_config_text(const std::string& text, const std::string& where);
SweepConfig load_config(const std::string& path);
// The same with every case's kernels replaced by `kernels` (sweep --kernels): the config is
// expanded as if its defaults named them and no case named its own.
SweepConfig load_config(const std::string& path, const std::vector<std::string>& kernels);

std::string fnv1a64_hex(const std::string& bytes);
// The config hash (SweepConfig::hash): fnv1a64_hex of the cases' params() as a JSON list, in
// case order; one definition, for the parsed config and for one whose cases were changed after.
std::string config_hash(const std::vector<SweepCase>& cases);

// --shard i/n (0 <= i < n): case c belongs to shard c % n.
struct Shard {
  int index = 0, count = 1;
  bool whole() const { return count == 1; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
};
Shard parse_shard(const std::string& text);  // throws usage_error naming --shard
bool in_shard(int64_t case_index, const Shard& s);
std::vector<SweepCase> select_shard(const std::vector<SweepCase>& cases, const Shard& s);

}  // namespace nvfp4::sweep
