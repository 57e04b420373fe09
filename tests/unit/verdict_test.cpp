// The verdict's logic (src/case/verdict.hpp) and the checked timing it rests on
// (src/measure/measure.hpp): which samples are checked, output slots, what a lazy or stale call
// looks like once gathered, the recheck, and the order of failures in the message. Each check is
// shown to catch the bug it is for, planted in a fake kernel.
#include <gtest/gtest.h>

#include <vector>

#include "src/case/verdict.hpp"
#include "src/measure/measure.hpp"
#include "src/problem/problem.hpp"

using namespace nvfp4;

TEST(CheckedTiming, FirstThenPowersOfTwoMinusOne) {
  std::vector<int64_t> got;
  for (int64_t a = 0; a < 40; ++a)
    if (checked_attempt(a)) got.push_back(a);
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 3, 7, 15, 31}));
  EXPECT_FALSE(checked_attempt(-1));
}

TEST(CheckedTiming, OutputSlotsOnePerCopyWithin3xL2) {
  EXPECT_EQ(output_slots(1, 1 << 20, 50u << 20), 1);
  EXPECT_EQ(output_slots(8, 1 << 20, 50u << 20), 8);     // 8 MB: fits
  EXPECT_EQ(output_slots(400, 1 << 20, 50u << 20), 150);  // 3x L2 / 1 MB
  EXPECT_EQ(output_slots(4, int64_t(1) << 30, 50u << 20), 1);  // a huge C: shared
}

namespace {

const Shape kS{4, 3, 16, 2};

std::vector<uint16_t> right_output() {
  std::vector<uint16_t> c(size_t(kS.l * kS.m * kS.n));
  for (size_t i = 0; i < c.size(); ++i) c[i] = uint16_t(0x3C00 + i);  // distinct finite halves
  return c;
}

// A host "kernel" timed by measure_host with the check that run_case builds: poison before a
// checked sample, gather after. `bad_from`: the call (0 = first timed) from which it stops
// writing (lazy); -1: honest.
TimedOutputsCheck time_fake(int bad_from, int iters) {
  const std::vector<uint16_t> ref = right_output();
  std::vector<uint16_t> c(ref.size(), kPoisonFp16);
  TimedOutputs timed(kS, timed_check_coords(kS, {}, 1), 1);
  TimedCheck check;
  check.poison = [&](cudaStream_t) { poison_host(c.data(), int64_t(c.size())); };
  check.collect = [&](const TimedBatch& b) { timed.gather(b, [&](int) { return c.data(); }); };
  MeasureOptions mo;
  mo.warmup = 0;
  mo.warmup_s = 0;
  mo.iters = iters;
  int call = 0;
  const Measurement m = measure_host(
      [&] {
        if (bad_from < 0 || call < bad_from) c = ref;
        ++call;
      },
      mo, &check);
  EXPECT_EQ(m.checked_samples, iters >= 8 ? 4 : 3);
  EXPECT_EQ(m.host_call.count, iters);
  return timed.judge(ref, Tolerance{});
}

}  // namespace

TEST(CheckedTiming, HonestCallsPass) {
  const TimedOutputsCheck t = time_fake(-1, 8);
  EXPECT_TRUE(t.done);
  EXPECT_EQ(t.failure, "");
  EXPECT_EQ(t.samples, 4);
  EXPECT_EQ(t.outputs, 4);
  EXPECT_EQ(t.coords, kS.l * kS.m * kS.n);  // a small C: every element
  EXPECT_EQ(t.elements, 4 * t.coords);
}

TEST(CheckedTiming, ALazyCallIsNamed) {
  // Right for the first two timed calls, then nothing: sample 3 is the first checked one left
  // poisoned (samples 0 and 1 were right).
  const TimedOutputsCheck t = time_fake(2, 8);
  EXPECT_NE(t.failure.find("timed sample 3 (its one call) wrote a wrong output: 24 of 24 checked "
                           "elements wrong (24 unwritten)"), std::string::npos) << t.failure;
  const TimedOutputsCheck first = time_fake(0, 4);
  EXPECT_NE(first.failure.find("timed sample 0"), std::string::npos) << first.failure;
}

TEST(CheckedTiming, EachSlotIsJudgedByTheLastCallThatWroteIt) {
  const std::vector<uint16_t> ref = right_output();
  const int64_t n = int64_t(ref.size());
  // 3 copies over 3 slots, a batch of 6 launches from copy 1: copy 2 (slot 2) is stale.
  std::vector<uint16_t> slots(size_t(3 * n));
  for (int k = 0; k < 3; ++k) std::copy(ref.begin(), ref.end(), slots.begin() + k * n);
  slots[size_t(2 * n + 5)] = 0x0000;
  TimedOutputs timed(kS, timed_check_coords(kS, {}, 1), 3);
  timed.gather({7, 1, 6, 3}, [&](int slot) { return slots.data() + slot * n; });
  const TimedOutputsCheck t = timed.judge(ref, Tolerance{});
  EXPECT_EQ(t.outputs, 3);
  // Launch j uses copy (1 + j) % 3: copy 2 last at j = 4, the 5th call.
  EXPECT_NE(t.failure.find("timed sample 7 (call 5 of 6, operand copy 2) wrote a wrong output: "
                           "1 of 24"), std::string::npos) << t.failure;
  // A batch shorter than the copies leaves slots alone: they are not read.
  TimedOutputs partial(kS, timed_check_coords(kS, {}, 1), 3);
  std::vector<uint16_t> poisoned(size_t(3 * n), kPoisonFp16);
  std::copy(ref.begin(), ref.end(), poisoned.begin());  // slot 0 only, written by copy 0
  partial.gather({0, 0, 1, 3}, [&](int slot) { return poisoned.data() + slot * n; });
  EXPECT_EQ(partial.judge(ref, Tolerance{}).failure, "");
  EXPECT_EQ(partial.judge(ref, Tolerance{}).outputs, 1);
}

TEST(CheckedTiming, SampledCoordinatesStayWhereTheReferenceIsKnown) {
  const Shape big{256, 256, 64, 1};
  const std::vector<Coord> known = sample_coords(big, 10, 3);
  EXPECT_EQ(timed_check_coords(big, known, 9), known);
  EXPECT_EQ(int64_t(timed_check_coords(big, {}, 9).size()), kTimedCheckElements);
}

TEST(Recheck, ACachedOutputFails) {
  const std::vector<uint16_t> fresh = right_output();
  std::vector<uint16_t> stale = fresh;
  stale[3] ^= 0x0400;
  const Recheck ok = judge_recheck(kS, 5, "x", fresh, fresh, {}, Tolerance{});
  EXPECT_TRUE(ok.result.passed());
  EXPECT_EQ(ok.result.mode, "full");
  const Recheck bad = judge_recheck(kS, 5, "x", stale, fresh, {}, Tolerance{});
  EXPECT_EQ(bad.result.mismatches, 1);
  // Sampled: the reference values are given per coordinate.
  const std::vector<Coord> at = {{0, 0, 3}, {1, 2, 2}};
  const std::vector<uint16_t> exp = {fresh[3], fresh[size_t((1 * 4 + 2) * 3 + 2)]};
  EXPECT_EQ(judge_recheck(kS, 5, "x", stale, exp, at, Tolerance{}).result.mismatches, 1);
  EXPECT_EQ(recheck_seed(5) == 5, false);
}

TEST(Verdict, FailuresMakeAPassedCaseIncorrectInOrder) {
  CaseResult r;
  r.disposition = Disposition::Passed;
  r.verdict = VerdictChecks{};
  apply_verdict(r);
  EXPECT_EQ(r.disposition, Disposition::Passed);
  r.verdict->floor_failure = "below the floor";
  r.verdict->recheck.done = true;  // an empty result: nothing checked, not passed
  apply_verdict(r);
  EXPECT_EQ(r.disposition, Disposition::Incorrect);
  EXPECT_NE(r.message.find("recheck on fresh operands"), std::string::npos) << r.message;
  r.disposition = Disposition::Passed;
  r.verdict->timed.failure = "timed sample 0 ...";
  apply_verdict(r);
  EXPECT_EQ(r.message, "timed sample 0 ...");
  // An incorrect case keeps its own message.
  r.message = "first call wrong";
  apply_verdict(r);
  EXPECT_EQ(r.message, "first call wrong");
}
