#include "src/sweep/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "src/core/error.hpp"
#include "src/report/writer.hpp"

namespace nvfp4::sweep {

ProgressMode parse_progress_mode(const std::string& s) {
  if (s == "auto") return isatty(STDOUT_FILENO) ? ProgressMode::Bar : ProgressMode::Lines;
  if (s == "bar") return ProgressMode::Bar;
  if (s == "lines") return ProgressMode::Lines;
  if (s == "off") return ProgressMode::Off;
  throw usage_error(fmt::format("--progress '{}': expected auto, bar, lines or off", s));
}

std::string format_duration(double seconds) {
  const int64_t t = std::max<int64_t>(0, int64_t(std::llround(seconds)));
  const int64_t h = t / 3600, m = (t / 60) % 60, s = t % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

namespace {

int terminal_width() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
  return 100;
}

// "host 12.34 us" (or ms, s: the unit that fits) or the message of a case that did not pass.
std::string outcome(const nlohmann::json& r) {
  const std::string disp = r.value("disposition", "error");
  if (disp == "passed" || disp == "incorrect") {
    std::string s;
    if (r.contains("kernel_timing") && r["kernel_timing"].value("ran", false))
      s = fmt::format("{} {}", r["kernel"].value("name", "?"),
                      human_duration(r["kernel_timing"]["stats"].value("median_us", 0.0)));
    if (disp == "incorrect") s += (s.empty() ? "" : ": ") + r.value("message", std::string());
    return s;
  }
  return r.value("message", std::string());
}

}  // namespace

Progress::Progress(ProgressMode mode, int64_t total, int64_t done)
    : mode_(mode), total_(total), done_(done) {
  if (mode_ != ProgressMode::Off)
    refresher_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
        if (mode_ == ProgressMode::Bar)
          draw_status_locked();
        else
          heartbeat_locked();
      }
    });
}

Progress::~Progress() { stop(); }

void Progress::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    clear_status_locked();
  }
  cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

std::string Progress::eta_locked() const {
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::string s = "elapsed " + format_duration(el);
  // Throughput of this run (resumed cases took no time here); parallel workers are included.
  if (done_here_ > 0)
    s += ", ~" + format_duration(el / double(done_here_) * double(total_ - done_)) + " left";
  return s;
}

void Progress::clear_status_locked() {
  if (status_shown_) {
    std::fputs("\r\033[K", stdout);
    std::fflush(stdout);
    status_shown_ = false;
  }
}

void Progress::draw_status_locked() {
  if (mode_ != ProgressMode::Bar || stopping_) return;
  std::string running;
  for (const auto& [slot, r] : running_) running += (running.empty() ? "" : " | ") + r.label;
  std::string line = fmt::format("[{}/{}] {} | running: {}", done_, total_, eta_locked(),
                                 running.empty() ? "-" : running);
  const size_t width = size_t(terminal_width() - 1);
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  std::fputs(("\r\033[K" + line).c_str(), stdout);
  std::fflush(stdout);
  status_shown_ = true;
}

void Progress::heartbeat_locked() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [slot, r] : running_) {
    const int minutes = int(std::chrono::duration<double>(now - r.since).count() / 60);
    if (minutes <= r.minutes_said) continue;
    r.minutes_said = minutes;
    std::printf("[%lld/%lld] running %s for %s | %s\n", (long long)done_, (long long)total_,
                r.label.c_str(), format_duration(minutes * 60.0).c_str(), eta_locked().c_str());
    std::fflush(stdout);
  }
}

void Progress::started(const SweepCase& c, int slot) {
  if (mode_ == ProgressMode::Off) return;
  std::lock_guard<std::mutex> lock(mu_);
  running_[slot] = {c.label(), std::chrono::steady_clock::now(), 0};
  draw_status_locked();
}

void Progress::finished(const SweepCase& c, int slot, const nlohmann::json& record) {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  ++done_here_;
  running_.erase(slot);
  if (mode_ == ProgressMode::Off) return;
  clear_status_locked();
  const std::string out = outcome(record);
  std::string where;
  if (record.contains("sweep") && record["sweep"].contains("device") &&
      !record["sweep"]["device"].is_null())
    where = fmt::format(" [gpu {}]", record["sweep"]["device"].get<int>());
  const int width = int(std::to_string(total_).size());
  std::printf("[%*lld/%lld] %-13s %s%s%s%s | %s\n", width, (long long)done_, (long long)total_,
              record.value("disposition", "error").c_str(), c.label().c_str(), where.c_str(),
              out.empty() ? "" : ": ", out.c_str(), eta_locked().c_str());
  std::fflush(stdout);
  draw_status_locked();
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == ProgressMode::Off) return;
  clear_status_locked();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  draw_status_locked();
}

}  // namespace nvfp4::sweep
