// SIGINT/SIGTERM during a sweep: the handler only raises a flag that the workers poll; they kill
// the running children, the sweep writes its report and exits 130. A second signal kills at once.
#pragma once

#include <atomic>

namespace nvfp4::sweep {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static const std::atomic<bool>& flag();
  static bool requested() { return flag().load(); }
  static int signal();  // the signal received, 0 if none
};

}  // namespace nvfp4::sweep
