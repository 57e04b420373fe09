// libFuzzer target: the command line parser (nvfp4::CommandLine::parse) on arbitrary argument
// vectors. The input is split at NUL bytes and newlines into at most 32 arguments after argv[0].
// parse() loads nothing, touches no device and writes nothing, so every input is safe to try;
// any crash, sanitizer report, leak or exception other than the tool's own is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/app/cli.hpp"
#include "src/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxArgs = 32;
  std::vector<std::string> args{"nvfp4bench"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() <= kMaxArgs; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\0' || c == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty() && args.size() <= kMaxArgs) args.push_back(cur);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  nvfp4::CommandLine cli;
  std::string message;
  const int rc = cli.parse(static_cast<int>(args.size()), argv.data(), message);
  // The contract main relies on: go on, or an exit code with something to print.
  if (rc != nvfp4::CommandLine::kExecute && rc != nvfp4::kExitPass && rc != nvfp4::kExitBadInput &&
      rc != nvfp4::kExitRuntime)
    __builtin_trap();
  if (rc == nvfp4::kExitBadInput && (message.empty() || message.find('\n') != std::string::npos))
    __builtin_trap();  // a refusal is exactly one non-empty line
  return 0;
}
