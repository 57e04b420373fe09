#include "src/core/host_memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

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

}  // namespace nvfp4
