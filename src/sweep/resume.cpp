#include "src/sweep/resume.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "src/core/error.hpp"
#include "src/sweep/jsonl.hpp"
#include "src/report/compare.hpp"
#include "src/report/report_schema.hpp"
#include "src/sweep/record_check.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

json jsonl_header(const SweepConfig& cfg, const Shard& shard) {
  return {{"nvfp4bench_sweep", 1},
          {"config", cfg.path},
          {"config_name", cfg.name},
          {"config_hash", cfg.hash},
          {"shard", {{"index", shard.index}, {"count", shard.count}}},
          {"cases_in_config", cfg.cases.size()}};
}

int64_t resume_from(const std::string& jsonl_path, const json& header, const SweepConfig& cfg,
                    const Shard& shard, SweepRun& run) {
  JsonlContents prev = read_jsonl(jsonl_path);
  if (prev.records.empty() || !prev.records[0].contains("nvfp4bench_sweep"))
    throw usage_error(
        fmt::format("--resume: {} is not a sweep's JSONL (no header line)", jsonl_path));
  const json& h = prev.records[0];
  const std::string hw = fmt::format("--resume: {} line 1: ", jsonl_path);
  const std::string h_hash = json_need(h, "config_hash", json::value_t::string, hw).get<std::string>();
  const json& h_shard = json_need(h, "shard", json::value_t::object, hw);
  for (const char* k : {"index", "count"}) (void)json_need(h_shard, k, json::value_t::number_integer, hw + "shard");
  if (h_hash != cfg.hash)
    throw usage_error(
        fmt::format("--resume: {} was written for another config (hash {}, this one {}); "
                    "use the original config or --overwrite",
                    jsonl_path, h_hash, cfg.hash));
  if (h_shard != header["shard"])
    throw usage_error(fmt::format("--resume: {} was written for shard {}/{}, not {}", jsonl_path,
                                  h["shard"].value("index", 0), h["shard"].value("count", 1),
                                  shard.str()));
  if (prev.torn_tail) {
    std::printf("sweep: %s: dropping a torn last line (a write cut short)\n", jsonl_path.c_str());
    truncate_file(jsonl_path, prev.valid_bytes);
  }
  std::map<int64_t, size_t> line_of;  // case index -> the line that recorded it
  for (size_t i = 1; i < prev.records.size(); ++i) {
    const json& r = prev.records[i];
    const size_t line = i + 1;  // read_jsonl keeps every line (a damaged one is an error)
    const json* idx_j = r.contains("sweep") && r["sweep"].is_object() && r["sweep"].contains("index")
                            ? &r["sweep"]["index"] : nullptr;
    if (!idx_j || !idx_j->is_number_integer() || !r.contains("disposition"))
      throw usage_error(fmt::format("--resume: {} line {}: not a case record (no sweep.index or "
                                    "disposition); the file was changed by hand or by another "
                                    "program: fix it or --overwrite", jsonl_path, line));
    const int64_t idx = idx_j->get<int64_t>();
    if (const auto it = line_of.find(idx); it != line_of.end())
      throw usage_error(fmt::format("--resume: {} line {}: case {} is recorded twice (first on line "
                                    "{}); remove one or --overwrite", jsonl_path, line, idx, it->second));
    line_of[idx] = line;
    // A record is trusted only as a case of this config and shard, in a report case's shape.
    const std::string where = fmt::format("--resume: {} line {}: ", jsonl_path, line);
    if (idx < 0 || idx >= int64_t(cfg.cases.size()) || !in_shard(idx, shard))
      throw usage_error(fmt::format("{}sweep.index {}: not a case of {} (cases 0 to {}, shard {}); "
                                    "fix the file or --overwrite", where, idx, cfg.path,
                                    int64_t(cfg.cases.size()) - 1, shard.str()));
    check_case_schema(r, where);
    check_case_shape(r, where);
    check_record_claims(r, cfg.cases[size_t(idx)], where);
    run.records[idx] = r;
  }
  std::vector<SweepCase> rest;
  for (const auto& c : run.todo)
    if (!run.records.count(c.index)) rest.push_back(c);
  run.todo = std::move(rest);
  return int64_t(run.records.size());
}

}  // namespace nvfp4::sweep
