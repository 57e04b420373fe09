#include "src/sweep/merge.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "src/core/error.hpp"
#include "src/sweep/records.hpp"
#include "src/report/compare.hpp"
#include "src/sweep/record_check.hpp"
#include "src/sweep/runner.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

namespace {

// j[key] when it is a string, else "": what merge only copies (hostname, time, device name).
std::string text_or_empty(const json& j, const char* key) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

json merge_reports(const std::vector<std::pair<std::string, json>>& inputs) {
  using vt = json::value_t;
  if (inputs.empty()) throw usage_error("merge: no input reports");
  std::string hash;
  int64_t shard_count = 0;
  int64_t in_config = 0;
  std::set<int64_t> shards_seen;
  std::map<int64_t, json> cases;
  std::map<int64_t, std::string> case_source;
  json merged_from = json::array();
  bool any_interrupted = false;
  for (const auto& [path, rep] : inputs) {
    // Every key read below is checked first: a damaged shard is bad input naming file and key.
    const std::string top = path + ": ";
    if (!rep.is_object()) throw usage_error(fmt::format("{}: not a JSON object; expected a sweep report", path));
    const json& s = json_need(rep, "sweep", vt::object, top);
    const std::string sw = top + "sweep";
    const std::string h = json_need(s, "config_hash", vt::string, sw).get<std::string>();
    const json& cs = json_need(rep, "cases", vt::array, top);
    if (s.contains("merged_from"))
      throw usage_error(fmt::format("{}: a merged report (sweep.merged_from); merge the shard "
                                    "reports it was made from", path));
    // An unsharded sweep's report has shard null: the one shard 0/1.
    json shard = {{"index", 0}, {"count", 1}};
    if (s.contains("shard") && !s["shard"].is_null()) shard = json_need(s, "shard", vt::object, sw);
    const int64_t idx = json_need(shard, "index", vt::number_integer, sw + ".shard").get<int64_t>();
    const int64_t count = json_need(shard, "count", vt::number_integer, sw + ".shard").get<int64_t>();
    if (count < 1 || idx < 0 || idx >= count)
      throw usage_error(fmt::format("{}: sweep.shard {}/{}: expected 0 <= index < count", path, idx, count));
    const int64_t n_config = json_need(s, "cases_in_config", vt::number_integer, sw).get<int64_t>();
    if (n_config < 0)
      throw usage_error(fmt::format("{}: sweep.cases_in_config {}: expected >= 0", path, n_config));
    if (hash.empty()) {
      hash = h;
      shard_count = count;
      in_config = n_config;
    } else if (h != hash) {
      throw usage_error(
          fmt::format("{}: config hash {} differs from {}'s {}: the reports come from "
                      "different configs (or different --peers)",
                      path, h, inputs.front().first, hash));
    } else if (count != shard_count) {
      throw usage_error(
          fmt::format("{}: shard {}/{} does not fit shards of {}", path, idx, count, shard_count));
    } else if (n_config != in_config) {
      throw usage_error(fmt::format("{}: sweep.cases_in_config {} differs from {}'s {}", path,
                                    n_config, inputs.front().first, in_config));
    }
    if (!shards_seen.insert(idx).second)
      throw usage_error(fmt::format("{}: shard {}/{} is given twice", path, idx, count));
    for (size_t ci = 0; ci < cs.size(); ++ci) {
      const json& c = cs[ci];
      const std::string where = fmt::format("{}: cases[{}]", path, ci);
      check_case_shape(c, where);
      check_case_matches_params(c, where);
      const json& cw = json_need(c, "sweep", vt::object, where);
      const int64_t i = json_need(cw, "index", vt::number_integer, where + ".sweep").get<int64_t>();
      // The index is checked against the config, not trusted: a case of another shard or past
      // the config's end would make a count look complete.
      if (i < 0 || i >= in_config || i % count != idx)
        throw usage_error(fmt::format("{}.sweep.index {}: not a case of shard {}/{} of a config "
                                      "with {} cases", where, i, idx, count, in_config));
      if (cases.count(i))
        throw usage_error(fmt::format("{}: case {} is also in {}", path, i, case_source[i]));
      cases[i] = c;
      case_source[i] = path;
    }
    if (!s.value("interrupted", json(nullptr)).is_null()) any_interrupted = true;
    merged_from.push_back({{"path", path},
                           {"shard", shard},
                           {"hostname", text_or_empty(rep, "hostname")},
                           {"utc_time", text_or_empty(rep, "utc_time")},
                           {"device", text_or_empty(rep.value("device", json::object()), "name")},
                           {"complete", s.contains("complete") && s["complete"].is_boolean() && s["complete"].get<bool>()},
                           {"cases_done", cs.size()}});
  }
  json out = inputs.front().second;
  json arr = json::array();
  for (auto& [i, c] : cases) arr.push_back(c);
  // Complete when every index of the config is there; the missing ones are named.
  json missing = json::array();
  for (int64_t i = 0; i < in_config; ++i)
    if (!cases.count(i)) missing.push_back(i);
  const bool complete = missing.empty();
  json sweep = out["sweep"];
  sweep["shard"] = nullptr;
  sweep["cases_in_shard"] = in_config;
  sweep["cases_done"] = arr.size();
  sweep["complete"] = complete;
  sweep["missing"] = missing;
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
