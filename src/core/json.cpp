#include "src/core/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "src/core/error.hpp"

namespace nvfp4 {

using nlohmann::json;

nlohmann::json parse_json_checked(const std::string& text, const std::string& what,
                                  const char* not_json) {
  std::vector<std::vector<std::string>> keys;  // per open object: its keys so far (empty for arrays)
  std::vector<bool> is_object;
  auto cb = [&](int, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (int(is_object.size()) >= kMaxJsonDepth)
          throw usage_error(fmt::format("{}: {}: nested deeper than {} levels", what, not_json,
                                        kMaxJsonDepth));
        is_object.push_back(ev == json::parse_event_t::object_start);
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!is_object.empty()) {
          is_object.pop_back();
          keys.pop_back();
        }
        break;
      case json::parse_event_t::key: {
        const std::string k = parsed.get<std::string>();
        auto& seen = keys.back();
        if (std::find(seen.begin(), seen.end(), k) != seen.end())
          // the key as JSON spells it: a control character in it (an escaped newline) stays one line
          throw usage_error(fmt::format("{}: {}: key {} appears twice in one object", what, not_json,
                                        json(k).dump(-1, ' ', false, json::error_handler_t::replace)));
        seen.push_back(k);
        break;
      }
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, cb);
  } catch (const json::exception& e) {
    std::string m = e.what();
    for (char& ch : m)
      if (ch == '\n') ch = ' ';
    throw usage_error(fmt::format("{}: {}: {}", what, not_json, m));
  }
}

const json& json_need(const json& j, const char* key, json::value_t type, const std::string& where) {
  const auto it = j.find(key);
  auto kind_ok = [&](const json& v) {
    if (type == json::value_t::number_float) return v.is_number();
    if (type == json::value_t::number_integer) return v.is_number_integer();
    return v.type() == type;
  };
  if (it == j.end() || !kind_ok(*it)) {
    const char* expected = type == json::value_t::number_float     ? "a number"
                           : type == json::value_t::number_integer ? "an integer"
                           : type == json::value_t::string         ? "a string"
                           : type == json::value_t::array          ? "an array"
                           : type == json::value_t::boolean        ? "a boolean"
                                                                   : "an object";
    // Top-level keys come after "FILE: ", nested ones after "FILE: path".
    const char* sep = !where.empty() && where.back() == ' ' ? "" : ".";
    throw usage_error(fmt::format("{}{}{}: {}; expected {}", where, sep, key,
                                  it == j.end() ? "missing" : "wrong type", expected));
  }
  return *it;
}

}  // namespace nvfp4
