// Reading JSON that a person wrote (configs, reports handed back to the tool): limits the parse
// must hold and errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nvfp4 {

// Parses JSON text from `what` (a file name) with limits a hand-written file must meet: nesting at
// most kMaxJsonDepth deep (deeper input used to crash the tool), no key twice in one object
// (nlohmann would keep the last silently). Throws usage_error "WHAT: not JSON: ...".
constexpr int kMaxJsonDepth = 64;
nlohmann::json parse_json_checked(const std::string& text, const std::string& what,
                                  const char* not_json = "not JSON");

// j[key] when j is an object holding it with the given type (number_float: any number), else
// usage_error "WHERE.key: missing|wrong type; expected …" (no "." when WHERE ends in a space,
// e.g. "FILE: "). Shared by every reader of reports and records (and of
// the sm90 fitter's timings, kernels/sm90/fit.cpp).
const nlohmann::json& json_need(const nlohmann::json& j, const char* key, nlohmann::json::value_t type,
                                const std::string& where);

}  // namespace nvfp4
