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
  sock_filter f[] = {
      // Another architecture's calls (i386 on x86-64) are refused whole.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      // x32 calls share x86-64's arch value, their numbers marked by bit 30: refused whole too
      // (they would reach seccomp() and userfaultfd() past the tests below).
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      // The clocks' rate and time (root only, but the tool may run as root): adjtimex slowed
      // CLOCK_MONOTONIC by 10 % in a red-team round. The tool times with CLOCK_MONOTONIC_RAW too.
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_adjtimex, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_adjtime, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_settimeofday, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_settime, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      // ptrace: a child the kernel forks could trace the tool's thread and hold its read of C.
      // Not under ASan, whose LeakSanitizer traces the process's threads at exit.
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NVFP4_ASAN ? 0xFFFFFFFFu : uint32_t(SYS_ptrace), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 5),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kUserfaultfdIocNew, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog prog{static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
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
