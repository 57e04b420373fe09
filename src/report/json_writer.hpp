// The native JSON report (schema: docs/report.md; version kReportSchemaVersion): the result
// model as JSON objects, which the json writer (--format json, --json) prints and a sweep's
// records reuse.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "src/report/result.hpp"

namespace nvfp4 {

nlohmann::json to_json(const RunInfo& info);
nlohmann::json to_json(const CaseResult& c, bool keep_samples);
nlohmann::json make_report(const RunInfo& info, const std::vector<CaseResult>& cases,
                           bool keep_samples);

}  // namespace nvfp4
