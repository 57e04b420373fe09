#include "src/core/files.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/core/error.hpp"

namespace nvfp4 {

namespace fs = std::filesystem;

namespace {

// The file an output path names: itself, or where its chain of symbolic links ends (a link is
// written through, as a shell's redirection does, not replaced by a regular file). "" when the
// chain does not end (a loop, or more than 40 links).
fs::path link_target(const fs::path& abs) {
  fs::path p = abs;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return {};
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return {};
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  if (path == "-")
    throw usage_error(fmt::format("{} -: not a file path (a report to stdout is --output - with "
                                  "--format)", flag));
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec || abs.filename().empty() || abs.filename() == "." || abs.filename() == ".." ||
      fs::is_directory(abs, ec))
    throw usage_error(fmt::format("{} {}: not a file path", flag, path));
  const std::string name = abs.filename().string();
  long name_max = pathconf(abs.parent_path().c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (long(name.size()) > name_max)
    throw usage_error(fmt::format("{} {}: file name is {} bytes; the system allows {}", flag, path,
                                  name.size(), name_max));
  if (abs.string().size() >= PATH_MAX)
    throw usage_error(fmt::format("{} {}: path is {} bytes; the system allows {}", flag, path,
                                  abs.string().size(), PATH_MAX - 1));
  const fs::path target = link_target(abs);
  if (target.empty())
    throw usage_error(fmt::format("{} {}: a symbolic link that leads nowhere (a loop?)", flag, path));
  // Through a link the file written is its target, in the target's folder.
  const std::string via = target == abs ? "" : fmt::format(" (the link's target {})", target.string());
  const fs::path parent = target.parent_path();
  if (!fs::is_directory(parent, ec) || access(parent.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("{} {}{}: folder {} does not exist or is not writable", flag, path,
                                  via, parent.string()));
  const fs::file_status st = fs::status(target, ec);
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st))
      throw usage_error(fmt::format("{} {}{}: exists and is not a regular file", flag, path, via));
    struct stat old {};
    // No write bit at all counts as read-only for root too (access() would let root write).
    if (access(target.c_str(), W_OK) != 0 ||
        (::stat(target.c_str(), &old) == 0 && (old.st_mode & 0222) == 0))
      throw usage_error(fmt::format("{} {}{}: exists and is not writable; not replaced", flag, path, via));
  }
}

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  // A folder opens as a stream and reads as empty: said as what it is, not as bad JSON.
  if (fs::is_directory(path, ec)) throw usage_error(fmt::format("{}: is a folder, not a file", path));
  // O_NONBLOCK: opening a FIFO does not wait for a writer; it is then refused as not a file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw usage_error(fmt::format("{}: cannot be read ({})", path, std::strerror(errno)));
  struct stat st {};
  const auto refuse = [&](const std::string& why) {
    ::close(fd);
    return usage_error(fmt::format("{}: {}; expected a regular file of at most {} MiB", path, why,
                                   kMaxInputBytes >> 20));
  };
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw refuse("not a regular file (a FIFO, a device or a socket)");
  if (st.st_size > kMaxInputBytes) throw refuse(fmt::format("{} bytes", int64_t(st.st_size)));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw usage_error(fmt::format("{}: cannot be read ({})", path, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, size_t(n));
    if (int64_t(text.size()) > kMaxInputBytes) throw refuse("more bytes than that (still growing)");
  }
  ::close(fd);
  return text;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  if (fs::exists(a, ea) && fs::exists(b, eb)) {
    std::error_code ec;
    if (fs::equivalent(a, b, ec)) return true;
  }
  std::error_code e1, e2;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a), e1);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b), e2);
  return !e1 && !e2 && pa == pb;
}

void check_outputs_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& given) {
  // Every command reads its own executable: an output over it (or a link to it) is refused too.
  std::vector<NamedPath> inputs = given;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) inputs.push_back({"the running executable", exe.string()});
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty() || path == "-") continue;
    for (const auto& [in_what, in_path] : inputs)
      if (!in_path.empty() && same_file(path, in_path))
        throw usage_error(fmt::format("{} {}: is the input {} ({}); an output never replaces an "
                                      "input", flag, path, in_what, in_path));
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].second.empty() && outputs[j].second != "-" && same_file(path, outputs[j].second))
        throw usage_error(fmt::format("{} {}: the same file as {} {}; give each output its own path",
                                      flag, path, outputs[j].first, outputs[j].second));
  }
}

void write_text_file_atomic(const std::string& path, const std::string& text) {
  std::error_code ec;
  const fs::path abs = link_target(fs::absolute(path, ec));
  if (abs.empty())
    throw usage_error(fmt::format("output file {}: a symbolic link that leads nowhere (a loop?)", path));
  struct stat old {};
  const bool existed = ::stat(abs.c_str(), &old) == 0;
  if (existed && (!S_ISREG(old.st_mode) || access(abs.c_str(), W_OK) != 0 || (old.st_mode & 0222) == 0))
    throw usage_error(fmt::format("output file {}: exists and is not a writable regular file; not "
                                  "replaced", path));
  // A short temporary name beside the target (a long target name plus a suffix could exceed
  // NAME_MAX); created with 0666 so the umask applies as for a new file.
  static std::atomic<int> counter{0};
  const std::string tmp = (abs.parent_path() / fmt::format(".nvfp4bench-{}-{}.tmp", getpid(),
                                                           counter.fetch_add(1))).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    throw usage_error(fmt::format("output file {}: cannot be written ({})", path, std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw runtime_error(fmt::format("writing {}: {}", path, std::strerror(err)));
    }
    done += size_t(w);
  }
  if (existed) (void)::fchmod(fd, old.st_mode & 07777);  // the replaced file's mode
  ::close(fd);
  if (std::rename(tmp.c_str(), abs.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw usage_error(fmt::format("output file {}: cannot be renamed into place ({})", path, std::strerror(err)));
  }
}

}  // namespace nvfp4
