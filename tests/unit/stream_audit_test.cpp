// --audit-streams' judgement of CUPTI's records (src/measure/stream_audit.hpp), on records made
// up here: what lies inside a window passes, what does not is named, and where the records
// cannot say, the audit says it cannot decide.
#include <gtest/gtest.h>

#include "src/measure/stream_audit.hpp"

using namespace nvfp4;

namespace {

constexpr uint32_t kTool = 7, kSide = 9;

AuditRecord rec(uint32_t stream, uint64_t start, uint64_t end, AuditRecord::Role role = AuditRecord::Role::Work,
                std::string what = "kernel side_gemm()") {
  AuditRecord r;
  r.stream = stream;
  r.start = start;
  r.end = end;
  r.role = role;
  if (role == AuditRecord::Role::Work) r.what = std::move(what);
  return r;
}

// Two windows on the tool's stream: [1000, 5000] and [11000, 15000] ns, with the tool's own work
// (generation, flush, gather) around them.
std::vector<AuditRecord> two_windows() {
  using R = AuditRecord::Role;
  return {rec(kTool, 0, 900, R::Work, "kernel generate"), rec(kTool, 950, 1000, R::Open),
          rec(kTool, 1000, 4900, R::Work, "kernel the_gemm()"), rec(kTool, 5000, 5050, R::Close),
          rec(kTool, 5100, 5200, R::Work, "kernel gather"), rec(kTool, 10900, 11000, R::Open),
          rec(kTool, 11000, 14900, R::Work, "kernel the_gemm()"), rec(kTool, 15000, 15050, R::Close)};
}

}  // namespace

TEST(StreamAudit, WorkInsideTheWindowsPasses) {
  std::vector<AuditRecord> r = two_windows();
  r.push_back(rec(kSide, 1200, 4800));    // fork-join inside window 1
  r.push_back(rec(kSide, 11000, 15000));  // exactly the second window
  const AuditOutcome o = judge_audit(r);
  EXPECT_EQ(o.windows, 2);
  EXPECT_EQ(o.outside, 0);
  EXPECT_EQ(o.failure, "");
  EXPECT_EQ(o.records, 10);
}

TEST(StreamAudit, WorkPastTheCloseIsNamed) {
  std::vector<AuditRecord> r = two_windows();
  r.push_back(rec(kSide, 4000, 6000, AuditRecord::Role::Work, "kernel late_gemm()"));  // ends after close
  r.push_back(rec(kSide, 7000, 8000, AuditRecord::Role::Work, "a copy of 64 bytes"));  // between windows
  const AuditOutcome o = judge_audit(r);
  EXPECT_EQ(o.outside, 2);
  EXPECT_NE(o.failure.find("saw 2 operations on another stream outside every timed window"), std::string::npos)
      << o.failure;
  EXPECT_NE(o.failure.find("kernel late_gemm() on CUDA stream 9"), std::string::npos) << o.failure;
  EXPECT_NE(o.failure.find("from 3.0 to 5.0 us after window 1 opened, which closed at 4.0 us"), std::string::npos)
      << o.failure;
}

TEST(StreamAudit, WorkBeforeTheFirstWindowIsNamed) {
  std::vector<AuditRecord> r = two_windows();
  r.push_back(rec(kSide, 100, 400));
  const AuditOutcome o = judge_audit(r);
  EXPECT_EQ(o.outside, 1);
  EXPECT_NE(o.failure.find("ran 0.9 us before the first window opened"), std::string::npos) << o.failure;
}

TEST(StreamAudit, TheToolsOwnWorkOutsideTheWindowsIsNotJudged) {
  std::vector<AuditRecord> r = two_windows();
  r.push_back(rec(kTool, 6000, 9000, AuditRecord::Role::Work, "kernel fill"));
  EXPECT_EQ(judge_audit(r).failure, "");
}

TEST(StreamAudit, WhereTheRecordsCannotSayItDoesNotPass) {
  EXPECT_NE(judge_audit({rec(kSide, 0, 10)}).failure.find("cannot decide: CUPTI recorded no timed window"),
            std::string::npos);
  std::vector<AuditRecord> r = two_windows();
  r.push_back(rec(kSide, 20000, 20010, AuditRecord::Role::Open));
  EXPECT_NE(judge_audit(r).failure.find("cannot decide: the window marks ran on two streams"), std::string::npos);
  // an open mark with no close: no window
  EXPECT_NE(judge_audit({rec(kTool, 0, 10, AuditRecord::Role::Open), rec(kSide, 20, 30)})
                .failure.find("no timed window"),
            std::string::npos);
}
