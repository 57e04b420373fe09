// `nvfp4bench merge OUT.json SHARD.json...`: joins the shard reports of one sweep.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "src/app/commands.hpp"
#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/json.hpp"
#include "src/report/report_schema.hpp"
#include "src/sweep/merge.hpp"
#include "src/sweep/records.hpp"

namespace nvfp4 {

namespace {

// OUT forgotten (`merge sweep-x.shard-*.json`) makes shard 0 the output: an existing OUT that is
// itself a shard report is refused, so no shard is ever replaced by the merge of the others.
void refuse_shard_as_output(const std::string& out) {
  std::ifstream in(out, std::ios::binary);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  // Only a report is ever replaced: a sweep config, a JSONL of records or any other file given
  // as OUT (by a slip of the argument order) is kept.
  if (!j.is_object() || !j.contains("schema_version") || !j.contains("cases"))
    throw usage_error(fmt::format("OUT {}: exists and is not an nvfp4bench report (a sweep "
                                  "config? a JSONL of records?); merge replaces only a report: "
                                  "give a new path", out));
  if (!j.contains("sweep") || !j["sweep"].is_object()) return;
  const nlohmann::json shard = j["sweep"].value("shard", nlohmann::json::object());
  if (!shard.is_object() || shard.value("count", 1) <= 1) return;
  throw usage_error(fmt::format(
      "OUT {}: is a shard report ({}/{}) and would be replaced by the merge; the first argument "
      "is the merged report to write (merge OUT.json SHARD.json...)",
      out, shard.value("index", 0), shard.value("count", 1)));
}

int merge_command(const std::string& out, const std::vector<std::string>& inputs) {
  std::vector<NamedPath> in_paths;
  for (const auto& p : inputs) in_paths.push_back({"SHARD", p});
  check_output_file("OUT", out);
  check_outputs_distinct({{"OUT", out}}, in_paths);
  refuse_shard_as_output(out);
  // Every file read before any is judged: a path that is no file is named first.
  std::vector<std::string> texts;
  for (const auto& path : inputs) texts.push_back(read_input_file(path));
  std::vector<std::pair<std::string, nlohmann::json>> reports;
  for (size_t i = 0; i < inputs.size(); ++i) {
    reports.emplace_back(inputs[i], parse_json_checked(texts[i], inputs[i]));
    check_report_schema(reports.back().second, inputs[i]);
  }
  const nlohmann::json merged = sweep::merge_reports(reports);
  write_text_file_atomic(out, merged.dump(2) + "\n");
  const auto& s = merged["sweep"];
  const auto& n = s["counts"];
  std::printf(
      "merge: %zu reports, %lld of %lld cases: %d passed, %d incorrect, %d not supported, "
      "%d errors; report %s\n",
      inputs.size(), (long long)s["cases_done"].get<int64_t>(),
      (long long)s["cases_in_config"].get<int64_t>(), n["passed"].get<int>(),
      n["incorrect"].get<int>(), n["not_supported"].get<int>(), n["error"].get<int>(), out.c_str());
  if (!s["complete"].get<bool>()) {
    std::string which;  // the missing indices, the first 20 of them
    const auto& missing = s["missing"];
    for (size_t i = 0; i < missing.size() && i < 20; ++i)
      which += (i ? ", " : "") + std::to_string(missing[i].get<int64_t>());
    if (missing.size() > 20) which += fmt::format(" and {} more", missing.size() - 20);
    std::printf("merge: incomplete: %zu cases of the config are in none of the reports: %s\n",
                missing.size(), which.c_str());
  }
  return sweep::exit_code_for(merged["cases"], s["complete"].get<bool>());
}

}  // namespace

Subcommand add_merge_command(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "merge",
      "join the shard reports of one sweep (same config hash) into one report, cases in order");
  sub->footer(
      "Exit codes: 0 complete and every case passed; 1 a case incorrect; 2 bad usage or input "
      "(unreadable shards, shards of different configs, OUT is a shard or an input), or only "
      "unsupported cases; 3 a case with an error, or shards missing.");
  sub->add_option("out", *out, "merged report to write")->required();
  sub->add_option("reports", *inputs, "shard reports (sweep --shard I/N --json ...)")->required();
  return {sub, [out, inputs](int, char**) { return merge_command(*out, *inputs); }};
}

}  // namespace nvfp4
