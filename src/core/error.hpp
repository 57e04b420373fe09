// The tool's error type and its exit codes, decided in one place.
#pragma once

#include <stdexcept>
#include <string>

namespace nvfp4 {

enum ExitCode : int {
  kExitPass = 0,           // every case verified
  kExitVerifyFailed = 1,   // a result did not match the reference (or compare found a regression)
  kExitBadInput = 2,       // bad usage, bad input, unsupported shape/kernel/reference
  kExitRuntime = 3,        // CUDA/cuBLAS failure, out of memory
  kExitNotComparable = 4,  // compare: a case has too few samples for a speed verdict
  kExitInterrupted = 130,  // SIGINT/SIGTERM: what was measured is written first
};

class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& msg) : std::runtime_error(msg), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad usage or input: names the field, the value and what was expected.
inline Error usage_error(const std::string& msg) { return Error(kExitBadInput, msg); }
// A failure of the machine or a library while running.
inline Error runtime_error(const std::string& msg) { return Error(kExitRuntime, msg); }

}  // namespace nvfp4
