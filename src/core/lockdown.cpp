#include "src/core/lockdown.hpp"

#include "src/core/asan.hpp"

#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <vector>

namespace nvfp4 {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kArch = 0;  // no filter: the architecture's numbers are not known here
#endif

// The x32 ABI's call numbers (x86-64 kernels with CONFIG_X86_X32_ABI): bit 30 set. No other
// architecture's numbers come near it.
constexpr uint32_t kX32Bit = 0x40000000u;

// /dev/userfaultfd's ioctl (Linux 6.1+), where the headers predate it.
constexpr uint32_t kUserfaultfdIocNew = 0xAA00;  // _IO(0xAA, 0x00)

}  // namespace

std::string lock_down_process() {
  if (kArch == 0) return "no seccomp filter for this architecture";
  const uint32_t deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  const auto load = [](uint32_t offset) { return sock_filter BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset); };
  const sock_filter refuse = BPF_STMT(BPF_RET | BPF_K, deny);
  const uint32_t nr = offsetof(seccomp_data, nr);
  std::vector<sock_filter> f = {
      // Another architecture's calls (i386 on x86-64) are refused whole; so are x32 calls, which
      // share x86-64's arch value, their numbers marked by bit 30 (they would reach seccomp() and
      // userfaultfd() past the tests below).
      load(offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      refuse,
      load(nr),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1),
      refuse,
  };
  // Calls refused whatever their arguments: seccomp filters, userfaultfds; the clocks' rate and
  // time (root only, but the tool may run as root: adjtimex slowed CLOCK_MONOTONIC by 10 % in a
  // red-team round; the tool times with CLOCK_MONOTONIC_RAW too); ptrace (a process the kernel
  // forks could stop the tool's thread at its read of C), except under ASan, whose LeakSanitizer
  // traces the process's threads at exit.
  std::vector<uint32_t> calls = {SYS_seccomp,       SYS_userfaultfd,  SYS_adjtimex,
                                 SYS_clock_adjtime, SYS_settimeofday, SYS_clock_settime};
  if (!NVFP4_ASAN) calls.push_back(SYS_ptrace);
  for (const uint32_t call : calls) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, call, 0, 1));
    f.push_back(refuse);
  }
  // Calls refused with one argument: prctl(PR_SET_SECCOMP), ioctl(USERFAULTFD_IOC_NEW) on
  // /dev/userfaultfd. The number is loaded again after the argument's test.
  for (const auto& [call, arg, value] : {std::tuple<uint32_t, uint32_t, uint32_t>{SYS_prctl, 0, PR_SET_SECCOMP},
                                         {SYS_ioctl, 1, kUserfaultfdIocNew}}) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, call, 0, 3));
    f.push_back(load(uint32_t(offsetof(seccomp_data, args) + 8 * arg)));  // the low 32 bits
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1));
    f.push_back(refuse);
    f.push_back(load(nr));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  const sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  // Needed to install a filter without CAP_SYS_ADMIN; it only stops exec() from gaining
  // privileges (setuid programs), which the tool never needs.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fmt::format("prctl(PR_SET_NO_NEW_PRIVS): {}", std::strerror(errno));
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0) return "";
  // EPERM: a filter that refuses seccomp() is on already (ours, inherited from the parent).
  if (errno == EPERM) return "";
  return fmt::format("seccomp: {}", std::strerror(errno));
}

}  // namespace nvfp4
