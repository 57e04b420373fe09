// Progress of a sweep on the terminal: one line per finished case (case i of n, disposition,
// the case, its time, elapsed and remaining time); on a terminal also a status line, redrawn
// every second, naming the cases running now. Plain lines when stdout is not a terminal, plus a
// line per minute that a case keeps running (so a batch log shows what a long case is doing).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "src/sweep/config.hpp"

namespace nvfp4::sweep {

enum class ProgressMode { Off, Lines, Bar };
// "auto" (Bar on a terminal, else Lines), "bar", "lines", "off"; throws usage_error.
ProgressMode parse_progress_mode(const std::string& s);

// "1:02:03" or "2:03".
std::string format_duration(double seconds);

class Progress {
 public:
  // `total`: cases of this run (shard); `done`: those already in the JSONL (resumed).
  Progress(ProgressMode mode, int64_t total, int64_t done);
  ~Progress();
  void started(const SweepCase& c, int slot);
  void finished(const SweepCase& c, int slot, const nlohmann::json& record);
  void note(const std::string& line);  // a line of its own (above the status line)
  void stop();                         // clears the status line, ends the refresher

 private:
  std::string eta_locked() const;
  void draw_status_locked();
  void clear_status_locked();

  ProgressMode mode_;
  int64_t total_, done_, done_here_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  struct Running {
    std::string label;
    std::chrono::steady_clock::time_point since;
    int minutes_said = 0;
  };
  std::map<int, Running> running_;  // slot -> case
  void heartbeat_locked();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool status_shown_ = false;
  std::thread refresher_;
};

}  // namespace nvfp4::sweep
