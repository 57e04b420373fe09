// One rule for every number a user types on a command line (--m, --seed, --rtol, --shard,
// --devices, compare's --threshold, ...): the whole text is the number - no spaces, no '+', no
// hex, no trailing characters - and it is in range. Each function returns "" when `text` is
// one, else why not, naming the text; the caller puts the flag in front.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

namespace nvfp4 {

// A decimal integer of type T (std::from_chars: digits, and '-' only for signed T).
template <class T>
std::string integer_text_problem(const std::string& text, T* out = nullptr) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  // Past the type's range: the bound it passed, said as what is allowed (a tighter lower bound,
  // such as >= 1, is the caller's own check and message).
  if (ec == std::errc::result_out_of_range)
    return !text.empty() && text[0] == '-'
               ? fmt::format("'{}' is out of range (at least {})", text, std::numeric_limits<T>::min())
               : fmt::format("'{}' is out of range (at most {})", text, std::numeric_limits<T>::max());
  if (text.empty() || ec != std::errc() || ptr != end)
    return fmt::format("'{}' is not {}", text, std::is_signed_v<T> ? "a decimal integer"
                                                                   : "a non-negative decimal integer");
  if (out) *out = v;
  return {};
}

// A decimal floating-point number as strtod reads it (inf and nan included: their range is the
// caller's to check), without the leading white space and the hex strtod would accept.
inline std::string number_text_problem(const std::string& text, double* out = nullptr) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || text[0] == '+' ||
      text.find_first_of("xX") != std::string::npos)  // strtod would read hex
    return fmt::format("'{}' is not a number", text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return fmt::format("'{}' is not a number", text);
  if (errno == ERANGE) return fmt::format("'{}' is out of range", text);
  if (out) *out = v;
  return {};
}

}  // namespace nvfp4
