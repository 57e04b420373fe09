// Reading a native report back into the result model (RunInfo + CaseResults), the writers'
// input: `convert` and `sweep --format` give every report kind (a single run's, a sweep's, a
// merged one) to the same writers a single run uses. The inverse of json_writer.cpp for the keys
// the writers show; a key the report lacks stays at its "absent" value (no clock read, no speed of
// light, no verdict), never a made-up 0.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/report/result.hpp"

namespace nvfp4 {

struct ReadReport {
  RunInfo info;
  std::vector<CaseResult> cases;
};

// The file's text parsed (parse_json_checked); usage_error "PATH: cannot be read (why)" or
// "PATH: not a regular file".
nlohmann::json read_report_file(const std::string& path);

// The report `j` (read from `what`, a file name) in the result model. Checks every key it reads:
// first what compare reads (read_report_cases), then the rest; a damaged report throws
// usage_error "WHAT: cases[2].kernel_timing.stats.mean_us: wrong type; expected a number".
ReadReport read_report(const nlohmann::json& j, const std::string& what);

// The report `j` (from `what`) in `format` (a writer_formats() name): read_report, then that
// writer; "json" is the report itself, checked and re-indented (the model holds only what the
// writers show: a sweep's section would be lost). What `convert` and `sweep --format` write.
std::string render_report(const nlohmann::json& j, const std::string& what, const std::string& format);

}  // namespace nvfp4
