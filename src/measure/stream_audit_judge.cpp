#include "src/measure/stream_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace nvfp4 {

AuditOutcome judge_audit(std::vector<AuditRecord> recs) {
  using Rec = AuditRecord;
  using Role = AuditRecord::Role;
  AuditOutcome o;
  o.records = int64_t(recs.size());
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) { return a.start < b.start; });
  // The tool's stream is the marks' stream; a window runs from an open mark's end to the start
  // of the close mark after it.
  uint32_t tool = 0;
  bool have_tool = false;
  std::vector<std::pair<uint64_t, uint64_t>> windows;
  uint64_t open_end = 0;
  bool open = false;
  for (const Rec& r : recs) {
    if (r.role == Role::Work) continue;
    if (have_tool && r.stream != tool) {
      o.failure = "--audit-streams cannot decide: the window marks ran on two streams";
      return o;
    }
    tool = r.stream;
    have_tool = true;
    if (r.role == Role::Open) {
      open_end = r.end;
      open = true;
    } else if (open) {
      windows.emplace_back(open_end, r.start);
      open = false;
    }
  }
  o.windows = int64_t(windows.size());
  if (windows.empty()) {
    o.failure = "--audit-streams cannot decide: CUPTI recorded no timed window";
    return o;
  }
  const Rec* first = nullptr;
  for (const Rec& r : recs) {
    if (r.role != Role::Work || r.stream == tool) continue;
    // The last window opened at or before the record's start is the only one that can hold it.
    auto w = std::upper_bound(windows.begin(), windows.end(), r.start,
                              [](uint64_t t, const std::pair<uint64_t, uint64_t>& win) { return t < win.first; });
    if (w != windows.begin() && r.end <= std::prev(w)->second) continue;
    ++o.outside;
    if (!first) first = &r;
  }
  if (first) {
    auto w = std::upper_bound(windows.begin(), windows.end(), first->start,
                              [](uint64_t t, const std::pair<uint64_t, uint64_t>& win) { return t < win.first; });
    std::string where;
    if (w == windows.begin())
      where = fmt::format("{:.1f} us before the first window opened", (w->first - first->start) * 1e-3);
    else
      where = fmt::format("from {:.1f} to {:.1f} us after window {} opened, which closed at {:.1f} us",
                          (double(first->start) - double(std::prev(w)->first)) * 1e-3,
                          (double(first->end) - double(std::prev(w)->first)) * 1e-3,
                          std::distance(windows.begin(), w),
                          (double(std::prev(w)->second) - double(std::prev(w)->first)) * 1e-3);
    o.failure = fmt::format("work outside the timed stream: --audit-streams saw {} operation{} on another "
                            "stream outside every timed window; the first, {} on CUDA stream {}, ran {}",
                            o.outside, o.outside == 1 ? "" : "s", first->what, first->stream, where);
  }
  return o;
}

}  // namespace nvfp4
