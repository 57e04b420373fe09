// libFuzzer target: the sweep config parser (nvfp4::sweep::parse_config_text) on arbitrary text.
// A config is either accepted or refused with nvfp4::Error (exit 2) and one line; anything else
// (a crash, a sanitizer report, another exception, a multi-line refusal) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/core/error.hpp"
#include "src/sweep/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nvfp4::sweep::SweepConfig c = nvfp4::sweep::parse_config_text(text, "<fuzz>");
    if (c.cases.empty() || int64_t(c.cases.size()) > nvfp4::sweep::kMaxCases) __builtin_trap();
  } catch (const nvfp4::Error& e) {
    const std::string what = e.what();
    if (e.exit_code() != nvfp4::kExitBadInput || what.empty() || what.find('\n') != std::string::npos)
      __builtin_trap();
  }
  return 0;
}
