// The one check of what a command reads back - a report (compare, convert, merge) or a sweep's
// JSONL record (--resume) - against the JSON Schema the project ships (schemas/report.schema.json,
// compiled in): types, ranges, enums, patterns, required and known keys. The first violation is a
// usage_error naming where it is, the key, its value and what the schema expects:
//   "r.json: cases[0].kernel_timing.stats.count: -7; expected an integer >= 0 (schemas/report.schema.json)"
// Schema version 1 reports (written before the schema) are left to the readers' own checks.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace nvfp4 {

// A whole report; `file` names it ("FILE: key: ...").
void check_report_schema(const nlohmann::json& report, const std::string& file);

// One case of a report (a sweep's JSONL record is one); `where` is "FILE line 3: " or
// "FILE: cases[2]".
void check_case_schema(const nlohmann::json& c, const std::string& where);

}  // namespace nvfp4
