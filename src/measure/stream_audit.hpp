// --audit-streams (docs/cli.md, "The verdict"): CUPTI's activity records of every kernel, copy
// and memset the process runs during a timing. The tool marks each timed window on its stream
// with two empty kernels; work on any other stream must lie inside a window (honest fork-join
// work does), else it was done outside the time that was measured.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvfp4 {

// One activity record: a kernel, copy or memset on a CUDA stream, from `start` to `end` (ns of
// CUPTI's clock); `role` marks the tool's window marks.
struct AuditRecord {
  enum class Role : uint8_t { Work, Open, Close };
  uint32_t stream = 0;
  uint64_t start = 0, end = 0;
  Role role = Role::Work;
  std::string what;  // work only: "kernel NAME", "a copy of N bytes", ...
};

struct AuditOutcome {
  int64_t records = 0;  // activity records seen (the tool's own included)
  int64_t windows = 0;  // timed windows found between the marks
  int64_t outside = 0;  // records on another stream outside every window
  std::string failure;  // empty: nothing outside; else the first one, or why it cannot decide
};

// The judgement of one timing's records (host code, tested without a GPU): the marks' stream is
// the tool's; a window runs from an open mark's end to the start of the close mark after it;
// work on any other stream must lie inside one window.
AuditOutcome judge_audit(std::vector<AuditRecord> recs);

class StreamAudit {
 public:
  // Loads CUPTI (libcupti.so.13 from the CUDA toolkit) at run time; throws a runtime error
  // (exit 3) naming why it cannot.
  static std::unique_ptr<StreamAudit> open();
  ~StreamAudit();
  StreamAudit(const StreamAudit&) = delete;
  StreamAudit& operator=(const StreamAudit&) = delete;

  void begin();                     // records from now on
  void open_window(cudaStream_t s);   // right before the window's start event
  void close_window(cudaStream_t s);  // right behind its stop event
  AuditOutcome end();               // stops recording (the device must be idle) and judges

  struct Api;
  struct State;

 private:
  StreamAudit() = default;
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
};

}  // namespace nvfp4
