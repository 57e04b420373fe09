// Text helpers the messages share.
#pragma once

#include <fmt/format.h>

#include <string>

namespace nvfp4 {

// The items of `xs` (strings or numbers) in order, `sep` between them: "1, 2, 4".
template <class Range>
std::string join(const Range& xs, const char* sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& x : xs) {
    if (!first) out += sep;
    first = false;
    out += fmt::to_string(x);
  }
  return out;
}

}  // namespace nvfp4
