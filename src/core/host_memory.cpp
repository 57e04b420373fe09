#include "src/core/host_memory.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <fstream>
#include <limits>

#include "src/core/error.hpp"

namespace nvfp4 {
namespace {

// A number read from the first token of a file, or -1 ("max", absent, unreadable).
int64_t read_number(const char* path) {
  std::ifstream f(path);
  int64_t v = -1;
  if (!(f >> v)) return -1;
  return v;
}

int64_t mem_available_kib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib;
  return -1;
}

}  // namespace

int64_t host_memory_available() {
  int64_t avail = -1;
  if (const int64_t kib = mem_available_kib(); kib >= 0) avail = kib * 1024;
  if (avail < 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    avail = pages > 0 && page > 0 ? int64_t(pages) * page : std::numeric_limits<int64_t>::max();
  }
  // A container's limit (cgroup v2) is the real bound when it is lower.
  const int64_t max = read_number("/sys/fs/cgroup/memory.max");
  const int64_t cur = read_number("/sys/fs/cgroup/memory.current");
  if (max > 0 && cur >= 0) avail = std::min(avail, std::max<int64_t>(max - cur, 0));
  return avail;
}

std::string byte_text(double bytes) {
  if (bytes >= double(1ll << 40)) return fmt::format("{:.1f} TiB", bytes / double(1ll << 40));
  if (bytes >= double(1ll << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ll << 30));
  return fmt::format("{:.1f} MiB", bytes / double(1ll << 20));
}

void require_host_memory(int64_t bytes, const std::string& what) {
  const int64_t avail = host_memory_available();
  if (bytes > avail)
    throw runtime_error(fmt::format("out of host memory: {} needs {} of host buffers, {} available",
                                    what, byte_text(double(bytes)), byte_text(double(avail))));
}

bool copy_without_faults(void* dst, const void* src, size_t bytes) {
  // One pipe for the process (the verdict's reads are on one thread), made larger than the
  // default 64 KiB where allowed so that a C of a few MiB takes few calls.
  static const struct Pipe {
    int fd[2] = {-1, -1};
    size_t chunk = 0;
    Pipe() {
      if (::pipe2(fd, O_CLOEXEC) != 0)
        throw runtime_error(fmt::format("pipe2 for the verdict's reads: {}", std::strerror(errno)));
      const int got = ::fcntl(fd[1], F_SETPIPE_SZ, 1 << 20);
      chunk = got > 0 ? size_t(got) : size_t(::fcntl(fd[1], F_GETPIPE_SZ));
      if (chunk == 0) chunk = 4096;
    }
  } pipe;
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  size_t done = 0;
  while (done < bytes) {
    const size_t want = std::min(pipe.chunk, bytes - done);
    const ssize_t wrote = ::write(pipe.fd[1], in + done, want);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;  // EFAULT: a page the kernel could not read
    for (size_t got = 0; got < size_t(wrote);) {
      const ssize_t r = ::read(pipe.fd[0], out + done + got, size_t(wrote) - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) throw runtime_error(fmt::format("reading the verdict's pipe: {}", std::strerror(errno)));
      got += size_t(r);
    }
    done += size_t(wrote);
  }
  return true;
}

}  // namespace nvfp4
