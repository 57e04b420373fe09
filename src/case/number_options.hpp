// The number rule of src/core/number_text.hpp as CLI11 validators, for every command's options:
// CLI11 2.1 alone reads hex, skips spaces, clamps out-of-range integers and reports a bad value
// as "--m = 16,abc".
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "src/core/number_text.hpp"

namespace nvfp4 {

template <class T>
CLI::Validator integer_text() {
  return CLI::Validator([](std::string& text) { return integer_text_problem<T>(text); }, "");
}

inline CLI::Validator number_text() {
  return CLI::Validator([](std::string& text) { return number_text_problem(text); }, "");
}

}  // namespace nvfp4
