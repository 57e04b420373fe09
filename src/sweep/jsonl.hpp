// JSON Lines files of sweep records: one object per line, each appended with one write() and
// flushed to the disk (fsync) before the next case starts, so a crash loses at most the line
// being written - and a torn last line is detected and cut off on --resume.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nvfp4::sweep {

class JsonlWriter {
 public:
  // Opens `path` for appending, creating it; throws usage_error when it can't.
  explicit JsonlWriter(const std::string& path);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  // Thread-safe; throws runtime_error when the write or fsync fails (disk full).
  void append(const nlohmann::json& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
};

// The sweep's hold on its JSONL: an exclusive flock on the file for as long as the sweep runs
// (taken before it is read, cut or appended to; not inherited by the case processes). A second
// sweep on the same JSONL is refused with a usage_error naming the holder's pid (/proc/locks).
class JsonlLock {
 public:
  explicit JsonlLock(const std::string& path);  // creates the file when missing
  ~JsonlLock();
  JsonlLock(const JsonlLock&) = delete;
  JsonlLock& operator=(const JsonlLock&) = delete;

 private:
  int fd_ = -1;
};

struct JsonlContents {
  std::vector<nlohmann::json> records;  // every complete line, in file order
  int64_t valid_bytes = 0;              // length of the complete lines
  bool torn_tail = false;               // a last line cut short (or unparseable) follows them
};

// Reads a JSON Lines file. Only the last line may be damaged (a crash mid-write); a damaged
// line before it is a usage_error naming the line.
JsonlContents read_jsonl(const std::string& path);
// Cuts the file to `bytes` (drops a torn tail before appending after it).
void truncate_file(const std::string& path, int64_t bytes);

}  // namespace nvfp4::sweep
