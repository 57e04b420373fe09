#include "src/sweep/merge.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "src/core/error.hpp"
#include "src/sweep/records.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

json merge_reports(const std::vector<std::pair<std::string, json>>& inputs) {
  if (inputs.empty()) throw usage_error("merge: no input reports");
  std::string hash;
  int shard_count = 0;
  int64_t in_config = 0;
  std::set<int> shards_seen;
  std::map<int64_t, json> cases;
  std::map<int64_t, std::string> case_source;
  json merged_from = json::array();
  bool any_interrupted = false;
  for (const auto& [path, rep] : inputs) {
    if (!rep.is_object() || !rep.contains("sweep") || !rep["sweep"].is_object() ||
        !rep["sweep"].contains("config_hash") || !rep.contains("cases") || !rep["cases"].is_array())
      throw usage_error(
          fmt::format("{}: not a sweep report (no sweep.config_hash or cases)", path));
    const json& s = rep["sweep"];
    const std::string h = s["config_hash"].get<std::string>();
    const json shard = s.value("shard", json::object());
    const int idx = shard.value("index", 0), count = shard.value("count", 1);
    if (hash.empty()) {
      hash = h;
      shard_count = count;
      in_config = s.value("cases_in_config", int64_t(0));
    } else if (h != hash) {
      throw usage_error(
          fmt::format("{}: config hash {} differs from {}'s {}: the reports come from "
                      "different configs (or different --peers)",
                      path, h, inputs.front().first, hash));
    } else if (count != shard_count) {
      throw usage_error(
          fmt::format("{}: shard {}/{} does not fit shards of {}", path, idx, count, shard_count));
    }
    if (!shards_seen.insert(idx).second)
      throw usage_error(fmt::format("{}: shard {}/{} is given twice", path, idx, count));
    for (const auto& c : rep["cases"]) {
      if (!c.contains("sweep") || !c["sweep"].contains("index"))
        throw usage_error(fmt::format("{}: a case without sweep.index", path));
      const int64_t i = c["sweep"]["index"].get<int64_t>();
      if (cases.count(i))
        throw usage_error(fmt::format("{}: case {} is also in {}", path, i, case_source[i]));
      cases[i] = c;
      case_source[i] = path;
    }
    if (!s.value("interrupted", json(nullptr)).is_null()) any_interrupted = true;
    merged_from.push_back({{"path", path},
                           {"shard", shard},
                           {"hostname", rep.value("hostname", "")},
                           {"utc_time", rep.value("utc_time", "")},
                           {"device", rep.value("device", json::object()).value("name", "")},
                           {"complete", s.value("complete", false)},
                           {"cases_done", rep["cases"].size()}});
  }
  json out = inputs.front().second;
  json arr = json::array();
  for (auto& [i, c] : cases) arr.push_back(c);
  const bool complete = int64_t(cases.size()) == in_config;
  json sweep = out["sweep"];
  sweep["shard"] = nullptr;
  sweep["cases_in_shard"] = in_config;
  sweep["cases_done"] = arr.size();
  sweep["complete"] = complete;
  sweep["interrupted"] = any_interrupted ? json("in a shard") : json(nullptr);
  sweep["counts"] = disposition_counts(arr);
  sweep["merged_from"] = merged_from;
  sweep.erase("resumed");
  sweep.erase("jsonl");
  out["sweep"] = sweep;
  out["cases"] = arr;
  return out;
}

}  // namespace nvfp4::sweep
