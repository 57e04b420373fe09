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

}  // namespace nvfp4
