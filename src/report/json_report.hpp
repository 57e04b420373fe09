// The native JSON report (schema: README "Report schema"; version kReportSchemaVersion).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/report/result.hpp"

namespace nvfp4 {

nlohmann::json to_json(const RunInfo& info);
nlohmann::json to_json(const CaseResult& c, bool keep_samples);
nlohmann::json make_report(const RunInfo& info, const std::vector<CaseResult>& cases,
                           bool keep_samples);
// Writes atomically (temporary file, then rename); throws usage_error if the path can't be written.
void write_text_file_atomic(const std::string& path, const std::string& text);

}  // namespace nvfp4
