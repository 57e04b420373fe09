#include "src/sweep/jsonl.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <fmt/format.h>
#include <unistd.h>

#include "src/core/files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "src/core/error.hpp"

namespace nvfp4::sweep {

JsonlWriter::JsonlWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw usage_error(
        fmt::format("{}: cannot be opened for appending ({})", path, std::strerror(errno)));
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlWriter::append(const nlohmann::json& record) {
  // NaN/Inf would make the line unreadable; nlohmann writes them as null.
  const std::string line =
      record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(fd_, line.data() + done, line.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw runtime_error(fmt::format("{}: write failed ({})", path_, std::strerror(errno)));
    }
    done += size_t(w);
  }
  while (::fsync(fd_) != 0)
    if (errno != EINTR)
      throw runtime_error(fmt::format("{}: fsync failed ({})", path_, std::strerror(errno)));
}

namespace {

// The pid holding a flock on the file (major:minor:inode) per /proc/locks; 0 when not found.
long flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  const std::string id = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev), st.st_ino);
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    // "1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF" ("->" marks a waiter)
    std::istringstream ls(line);
    std::string num, kind, adv, mode, pid, dev;
    ls >> num >> kind;
    if (kind == "->") ls >> kind;
    ls >> adv >> mode >> pid >> dev;
    if (kind == "FLOCK" && dev == id) return std::atol(pid.c_str());
  }
  return 0;
}

}  // namespace

JsonlLock::JsonlLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw usage_error(fmt::format("{}: cannot be opened ({})", path, std::strerror(errno)));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    const long pid = err == EWOULDBLOCK ? flock_holder(fd_) : 0;
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK)
      throw usage_error(fmt::format("{}: cannot be locked ({})", path, std::strerror(err)));
    throw usage_error(fmt::format(
        "{}: in use by another sweep ({}); wait for it to end, or give this one another --json "
        "or --jsonl", path, pid > 0 ? fmt::format("pid {}", pid) : std::string("pid unknown")));
  }
}

JsonlLock::~JsonlLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

JsonlContents read_jsonl(const std::string& path) {
  const std::string text = read_input_file(path);
  JsonlContents out;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    const size_t nl = text.find('\n', pos);
    const bool complete = nl != std::string::npos;
    const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    const size_t next = complete ? nl + 1 : text.size();
    nlohmann::json j;
    bool ok = complete;
    if (ok) {
      try {
        j = nlohmann::json::parse(line);
        ok = j.is_object();
      } catch (const nlohmann::json::parse_error&) {
        ok = false;
      }
    }
    if (!ok) {
      if (next < text.size())  // damage before the last line is not a crash's signature
        throw usage_error(
            fmt::format("{} line {}: not a JSON object: the file is damaged", path, line_no));
      out.torn_tail = true;
      break;
    }
    out.records.push_back(std::move(j));
    out.valid_bytes = int64_t(next);
    pos = next;
  }
  return out;
}

void truncate_file(const std::string& path, int64_t bytes) {
  if (::truncate(path.c_str(), bytes) != 0)
    throw runtime_error(fmt::format("{}: cannot truncate ({})", path, std::strerror(errno)));
}

}  // namespace nvfp4::sweep
