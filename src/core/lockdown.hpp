// The tool's process closed to the two ways a kernel in it could hold or serve the tool's own
// system calls without touching the tool's memory (docs/cli.md, "What catches what"):
//   - a seccomp filter of its own on the tool's thread (a user notification holding the read of C
//     until a thread of the kernel's has computed it, after the window);
//   - a userfaultfd (serving the faults of the tool's reads of C);
//   - ptrace from a process it forks (stopping the tool's thread at the read of C);
//   - the clocks' rate or time (adjtimex, clock_adjtime, settimeofday, clock_settime: root only).
// Installed once, first thing in main(): a seccomp filter that answers EPERM to seccomp(),
// prctl(PR_SET_SECCOMP), userfaultfd(), /dev/userfaultfd's USERFAULTFD_IOC_NEW, the four
// clock-setting calls and (not under ASan, whose leak check traces threads) ptrace(), and lets
// every other call through. Filters stack and are inherited, so nothing loaded later can remove
// it; children (a sweep's workers, an isolated run) inherit it too.
#pragma once

#include <string>

namespace nvfp4 {

// "" once the filter is in place (or already was, inherited), else why not (no seccomp in this
// kernel): then no kernel can install a filter either.
std::string lock_down_process();

}  // namespace nvfp4
