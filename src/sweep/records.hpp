// A sweep's case records: counts by disposition, the exit code they give, and the record of a
// case that left no report of its own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/sweep/config.hpp"

namespace nvfp4::sweep {

// 1 if any case is incorrect, else 3 if any error (or `complete` is false), else 2 if any case
// was not supported, else 0.
int exit_code_for(const nlohmann::json& cases, bool complete);

// {"passed": n, "incorrect": n, "not_supported": n, "error": n}
nlohmann::json disposition_counts(const nlohmann::json& cases);

// The record of a case whose child left no report (crash, timeout, usage error): a report's case
// as the json writer writes it, with what was asked for. `disposition` is a disposition_name.
nlohmann::json synthesized_record(const SweepCase& c, const std::string& disposition,
                                  const std::string& message);

// The one-line reason in a child's log: its last "nvfp4bench: ..." line, else its last line.
std::string error_line_of_log(const std::string& log_text);

}  // namespace nvfp4::sweep
