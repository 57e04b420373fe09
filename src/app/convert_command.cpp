// `nvfp4bench convert REPORT --format F [--output PATH|-]`: any native report (a single run's, a
// sweep's, a merged one) written in another format by the writers a single run uses.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "src/app/commands.hpp"
#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/report/report_reader.hpp"
#include "src/report/writer.hpp"

namespace nvfp4 {

namespace {

struct ConvertArgs {
  std::string report, format, output = "-";
};

// "single run", "sweep", "merged sweep": what the report is, for the line convert prints.
std::string report_kind(const nlohmann::json& j) {
  const auto s = j.find("sweep");
  if (s == j.end() || !s->is_object()) return "single run";
  return s->contains("merged_from") ? "merged sweep" : "sweep";
}

int convert_command(const ConvertArgs& a) {
  (void)writer_for("--format", a.format);  // a bad format is refused before the report is read
  if (a.output != "-") {
    check_output_file("--output", a.output);
    check_outputs_distinct({{"--output", a.output}}, {{"REPORT", a.report}});
  }
  const nlohmann::json j = read_report_file(a.report);
  const std::string text = render_report(j, a.report, a.format);
  if (a.output == "-") {
    std::fputs(text.c_str(), stdout);
    return kExitPass;
  }
  write_text_file_atomic(a.output, text);
  const size_t n = j["cases"].size();  // read_report checked it is an array
  std::printf("convert: %s (%s, %zu case%s) -> %s (%s)\n", a.report.c_str(), report_kind(j).c_str(),
              n, n == 1 ? "" : "s", a.output.c_str(), a.format.c_str());
  return kExitPass;
}

}  // namespace

Subcommand add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "write a report (a single run's --json, a sweep's or a merged one) in another format: "
      "google-benchmark JSON, Bencher, CSV, Markdown, the text summary (docs/report.md)");
  sub->footer(
      "Exit codes: 0 written (whatever the cases' dispositions: each format shows a failed case "
      "as failed); 2 bad usage, an unreadable or damaged report (the file and the key), or an "
      "output that would replace the report.");
  sub->add_option("report", args->report, "the native report to convert")->required();
  std::string formats;
  for (const auto& f : writer_formats()) formats += (formats.empty() ? "" : "|") + f;
  sub->add_option("--format", args->format, formats)->required();
  sub->add_option("--output", args->output, "the file to write ('-': stdout)")
      ->capture_default_str();
  return {sub, [args](int, char**) { return convert_command(*args); }};
}

}  // namespace nvfp4
