// The verdict's logic (src/case/verdict.hpp) and the timed runs it rests on
// (src/case/checked_runs.hpp): fresh operands and a random C on every call, which samples are
// verified, what a lazy call looks like once gathered, --check-every-call, the recheck, the
// order of failures in the message, the PRF the seeds are drawn through and how a host C is read. Each check is shown to catch the bug it is for, planted in
// a fake kernel.
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>
#include <vector>

#include "kernels/reference/cpu_exact.hpp"
#include "src/case/checked_runs.hpp"
#include "src/case/verdict.hpp"
#include "src/core/asan.hpp"
#include "src/core/host_memory.hpp"
#include "src/core/lockdown.hpp"
#include "src/core/siphash.hpp"
#include "src/measure/measure.hpp"
#include "src/problem/problem.hpp"

using namespace nvfp4;

namespace {

const Shape kS{4, 3, 16, 2};

std::vector<uint16_t> right_output() {
  std::vector<uint16_t> c(size_t(kS.l * kS.m * kS.n));
  for (size_t i = 0; i < c.size(); ++i) c[i] = uint16_t(0x3C00 + i);  // distinct finite halves
  return c;
}

// A host kernel that computes with the exact CPU reference on the calls `computes(call)` says
// (call 0 is the first call the timer makes), and otherwise leaves C as it found it; it records
// what it saw: a hash of its inputs and of C on entry.
class FakeKernel final : public Gemm {
 public:
  explicit FakeKernel(std::function<bool(int)> computes) : computes_(std::move(computes)) {}
  std::string name() const override { return "fake"; }
  std::string description() const override { return "fake"; }
  Space space() const override { return Space::Host; }
  Availability availability(const DeviceInfo&) const override { return {true, ""}; }
  void run(const Shape& s, const Operands& o, void*, cudaStream_t) override {
    const int64_t c_elems = s.l * s.m * s.n;
    uint64_t in = 0, c = 0;
    for (int64_t i = 0; i < s.l * s.m * s.k / 2; ++i) in = mix64(in ^ o.a[i]);
    for (int64_t i = 0; i < s.l * s.n * s.k / 2; ++i) in = mix64(in ^ o.b[i]);
    for (int64_t i = 0; i < c_elems; ++i) c = mix64(c ^ o.c[i]);
    inputs.push_back(in);
    entry_c.push_back(c);
    entry_poisoned.push_back(o.c[0] == kPoisonFp16);
    if (computes_(calls++)) exact_gemm(s, o);
  }
  int calls = 0;
  std::vector<uint64_t> inputs, entry_c;
  std::vector<bool> entry_poisoned;

 private:
  std::function<bool(int)> computes_;
};

// `kernel` timed on the host as run_case does (iters samples, no warm-up), its outputs judged
// against the CPU reference: what the verdict says of its timed calls.
TimedOutputsCheck time_fake(FakeKernel& kernel, int iters, bool every_call = false,
                            uint64_t secret = 42) {
  auto reference = make_cpu_exact_reference();
  TimedRuns runs;
  runs.problem.shape = kS;
  runs.secret = secret;
  runs.reference = reference.get();
  runs.every_call = every_call;
  std::unique_ptr<TimedOutputs> timed;
  runs.timed = &timed;
  MeasureOptions mo;
  mo.warmup = 0;
  mo.warmup_s = 0;
  mo.iters = iters;
  std::vector<uint16_t> c(size_t(kS.l * kS.m * kS.n));
  HostTensors ops;
  const Measurement m = time_on_host(kernel, nullptr, mo, ops, c, runs);
  EXPECT_EQ(m.host_call.count, iters);
  return timed->judge(expected_on_host(runs), Tolerance{});
}

}  // namespace

TEST(FreshRuns, EveryCallSeesFreshOperandsAndARandomC) {
  FakeKernel k([](int) { return true; });
  const TimedOutputsCheck t = time_fake(k, 40);
  EXPECT_EQ(t.failure, "");
  ASSERT_EQ(k.calls, 40);
  EXPECT_EQ(std::set<uint64_t>(k.inputs.begin(), k.inputs.end()).size(), 40u);  // no operands seen twice
  EXPECT_EQ(std::set<uint64_t>(k.entry_c.begin(), k.entry_c.end()).size(), 40u);  // no C seen twice
  EXPECT_EQ(std::count(k.entry_poisoned.begin(), k.entry_poisoned.end(), true), 0);  // never the poison
  EXPECT_TRUE(t.done);
  EXPECT_EQ(t.samples, kVerifiedSamples);  // 32 of 40
  EXPECT_EQ(t.outputs, kVerifiedSamples);
  EXPECT_EQ(t.coords, kS.l * kS.m * kS.n);  // a small C: every element
  EXPECT_EQ(t.runs, 40);
  EXPECT_EQ(t.secret_seed, 42u);
  // Another secret, other operands.
  FakeKernel k2([](int) { return true; });
  time_fake(k2, 4, false, 43);
  EXPECT_NE(k2.inputs[0], k.inputs[0]);
}

TEST(FreshRuns, ALazyCallIsCaughtAndNamed) {
  // Computes on the first two calls only.
  FakeKernel k([](int call) { return call < 2; });
  const TimedOutputsCheck t = time_fake(k, 8);
  EXPECT_NE(t.failure.find("timed sample 2 (its one call, verified after timing) wrote a wrong output: "
                           "24 of 24 checked elements wrong (24 left as the tool's random fill)"),
            std::string::npos)
      << t.failure;
}

TEST(FreshRuns, TheOldPublicScheduleIsNoEscape) {
  // Computes on calls 0, 1, 3, 7, 15, ... (what used to be checked) and nowhere else.
  FakeKernel k([](int call) { return ((call + 1) & call) == 0; });
  EXPECT_NE(time_fake(k, 64).failure.find("wrote a wrong output"), std::string::npos);
}

TEST(FreshRuns, WhichSamplesAreVerifiedFollowsTheSecret) {
  // One lazy call in 64: caught for some secrets, not others, and over many secrets about as
  // often as kVerifiedSamples / 64 says (the draw is uniform over the samples).
  int caught = 0;
  constexpr int kSecrets = 60;
  for (int secret = 0; secret < kSecrets; ++secret) {
    FakeKernel k([](int call) { return call != 40; });
    caught += !time_fake(k, 64, false, uint64_t(secret)).failure.empty();
  }
  EXPECT_GT(caught, kSecrets * 3 / 10);  // expected half; these bounds are about 3 sigma
  EXPECT_LT(caught, kSecrets * 7 / 10);
}

TEST(FreshRuns, CheckEveryCallStopsAtTheFirstWrongCall) {
  FakeKernel k([](int call) { return call != 5; });
  try {
    time_fake(k, 20, true);
    FAIL() << "a wrong call went through";
  } catch (const VerdictStop& e) {
    EXPECT_EQ(e.part(), "timed_outputs");
    EXPECT_NE(std::string(e.what()).find("--check-every-call: call 5 (timed sample 5, launch 1 of 1) "
                                         "wrote a wrong output: 24 of 24"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(k.calls, 6);
  FakeKernel honest([](int) { return true; });
  const TimedOutputsCheck t = time_fake(honest, 10, true);
  EXPECT_TRUE(t.every_call);
  EXPECT_EQ(t.samples, 10);
  EXPECT_EQ(t.elements, 10 * kS.l * kS.m * kS.n);
  EXPECT_EQ(t.failure, "");
}

TEST(FreshRuns, FillsAreFiniteAndNeverThePoison) {
  for (uint64_t e = 0; e < 200000; ++e) {
    const uint16_t v = random_finite_fp16(7, e);
    ASSERT_NE(v & 0x7C00u, 0x7C00u) << e;
    ASSERT_NE(v, kPoisonFp16);
    ASSERT_GE(std::fabs(fp16_bits_to_double(v)), 1024.0) << e;  // no unwritten element passes as 0
  }
  // Gathered elements: all of a small C in order, else spread over it.
  EXPECT_EQ(gathered_index(1, 0, 5, 10, 10), 5);
  std::set<int64_t> seen;
  for (int64_t t = 0; t < 256; ++t) seen.insert(gathered_index(1, 2, t, 1 << 20, 256));
  EXPECT_GT(seen.size(), 250u);
  EXPECT_EQ(gathered_per_slot(1 << 20, 1), kGatheredPerRun);
  EXPECT_EQ(gathered_per_slot(1 << 20, 64), kMinGatheredPerSlot);
  EXPECT_EQ(gathered_per_slot(100, 1), 100);
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

// A held call's host time against its window (measure.hpp, held_host_time_failure): a GPU
// kernel's enqueue and a Python call's overhead pass; a call that computes on the CPU or waits for
// its own copies (milliseconds on the host, microseconds of GPU work) is named, with both figures.
TEST(HeldHostTime, OnlyHostWorkThatDwarfsTheWindowFails) {
  EXPECT_EQ(held_host_time_failure(3, 68), "");        // sm90's enqueue
  EXPECT_EQ(held_host_time_failure(280, 10), "");      // a Python call at a small shape
  EXPECT_EQ(held_host_time_failure(900, 2), "");       // under the absolute bound
  EXPECT_EQ(held_host_time_failure(5000, 400), "");    // under the ratio: the window holds its work
  const std::string f = held_host_time_failure(2500, 3.5);
  EXPECT_NE(f.find("work outside the timed stream: run() spent a median 2500 us on the host"), std::string::npos) << f;
  EXPECT_NE(f.find("2500 us"), std::string::npos) << f;
  EXPECT_NE(f.find("3.50 us"), std::string::npos) << f;
  EXPECT_NE(held_host_time_failure(kMaxHeldHostUs + 1, 0), "");  // no GPU work at all
}

// The PRF between the secret and every seed (src/core/siphash.hpp): SipHash-2-4's reference
// vectors (key 00..0f, messages 00 01 .. of length n; Aumasson and Bernstein's vectors_sip64).
TEST(SecretDraws, SipHashMatchesTheReferenceVectors) {
  uint8_t msg[64];
  for (int i = 0; i < 64; ++i) msg[i] = uint8_t(i);
  const uint64_t k0 = 0x0706050403020100ull, k1 = 0x0f0e0d0c0b0a0908ull;
  const std::pair<size_t, uint64_t> vectors[] = {{0, 0x726fdb47dd0e0e31ull},  {1, 0x74f839c593dc67fdull},
                                                 {7, 0xab0200f58b01d137ull},  {8, 0x93f5f5799a932462ull},
                                                 {15, 0xa129ca6149be45e5ull}, {16, 0x3f2acc7f57c29bdbull},
                                                 {63, 0x958a324ceb064572ull}};
  for (const auto& [n, want] : vectors) EXPECT_EQ(siphash24(k0, k1, msg, n), want) << n << " bytes";
  // The two-word form is the 16-byte message of both words, little-endian.
  EXPECT_EQ(siphash24(k0, k1, 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull), 0x3f2acc7f57c29bdbull);
}

// Each kind of seed in its own domain: no run's operand, fill or gather seed equals another's, and
// a different secret changes them all.
TEST(SecretDraws, SeedsOfEachKindAndRunAreDistinct) {
  std::set<uint64_t> seen;
  for (int64_t run = 0; run < 200; ++run) {
    for (int launch = 0; launch < 4; ++launch) EXPECT_TRUE(seen.insert(call_seed(7, run, launch)).second);
    EXPECT_TRUE(seen.insert(fill_seed(7, run)).second);
    EXPECT_TRUE(seen.insert(gather_seed(7, run)).second);
    EXPECT_NE(call_seed(7, run, 0), call_seed(8, run, 0));
    EXPECT_NE(gather_seed(7, run), gather_seed(8, run));
  }
  EXPECT_NE(coords_seed(7, kCoordsRecheck), coords_seed(7, kCoordsFirstCall));
}

// How the verdict reads a host kernel's C: right where the memory is readable, false (no signal,
// no handler run) where a page is protected.
TEST(SecretDraws, CopyWithoutFaultsReadsOrSaysItCannot) {
  std::vector<uint16_t> src(300000), dst(src.size());  // more than one pipe's worth
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(i * 7);
  ASSERT_TRUE(copy_without_faults(dst.data(), src.data(), src.size() * 2));
  EXPECT_EQ(dst, src);
  const long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, size_t(3 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(p) + page, size_t(page), PROT_NONE), 0);
  std::vector<char> out(size_t(3 * page));
  EXPECT_FALSE(copy_without_faults(out.data(), p, out.size()));
  EXPECT_TRUE(copy_without_faults(out.data(), p, size_t(page)));  // the readable page alone
  munmap(p, size_t(3 * page));
}

// The host timer's read of C right behind the call (measure_host's `behind`): a wait over 100 us
// plus C's copy at 1 GB/s, and over a quarter of the call, fails; honest reads are far below both.
TEST(ReadGap, OnlyAWaitThatDwarfsTheCallFails) {
  EXPECT_EQ(read_gap_failure(30, 5, 2048), "");         // a small C's copy behind a short call
  EXPECT_EQ(read_gap_failure(90, 10, 0), "");           // under the absolute bound
  EXPECT_EQ(read_gap_failure(2000, 10, 2000000), "");   // a 2 MB C's copy at 1 GB/s
  EXPECT_EQ(read_gap_failure(2000, 10000, 0), "");      // under the ratio: the call holds its work
  EXPECT_NE(read_gap_failure(900, 30, 1024), "");       // the fifth round's memory-lock stall
  EXPECT_EQ(read_gap_bound_us(1000000), 1100);
  const std::string f = read_gap_failure(5000, 250, 0);
  EXPECT_NE(f.find("work outside the timed window: reading C after each call took a median 5000 us"),
            std::string::npos) << f;
  EXPECT_NE(f.find("20.00x the call's 250 us"), std::string::npos) << f;
}

// measure_host times the read behind every call and judges the median; planted: a read that waits
// 3 ms behind a call of ~0.1 ms (what a kernel's thread that the read blocks on looks like).
TEST(ReadGap, MeasureHostJudgesTheWaitBehindTheCall) {
  MeasureOptions o;
  o.iters = 7;
  o.warmup = 1;
  o.warmup_s = 0;
  volatile double sink = 0;
  const auto call = [&] {
    for (int i = 0; i < 20000; ++i) sink = sink + std::sqrt(double(i));
  };
  for (const bool waits : {false, true}) {
    SampleHooks hooks;
    int reads = 0;
    hooks.behind = [&](cudaStream_t, int64_t) {
      ++reads;
      if (waits) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    };
    const Measurement m = measure_host(call, o, &hooks);
    EXPECT_EQ(reads, 8) << "every run's C is read, warm-ups too";
    EXPECT_EQ(m.read_gap.count, 7) << "judged over the samples";
    if (waits) {
      EXPECT_GE(m.read_gap.median, 3000);
      EXPECT_NE(m.isolation_failure.find("reading C after each call"), std::string::npos) << m.isolation_failure;
    } else {
      EXPECT_EQ(m.isolation_failure, "") << "median read " << m.read_gap.median << " us";
    }
  }
}

// The tool's own seccomp filter (src/core/lockdown.hpp), installed in a forked child: the calls a
// kernel could hold or serve the tool's with are refused, others go through. Under ASan ptrace
// stays allowed (LeakSanitizer traces threads at exit).
TEST(Lockdown, RefusesTheCallsThatCouldHoldTheTools) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad = 0;
    if (!lock_down_process().empty()) _exit(10);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, nullptr) != -1 || errno != EPERM) bad |= 1;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != -1 || errno != EPERM) bad |= 2;
    if (syscall(SYS_userfaultfd, 0) != -1 || errno != EPERM) bad |= 4;
    const long traced = syscall(SYS_ptrace, PTRACE_TRACEME, 0, nullptr, nullptr);
    if (!NVFP4_ASAN && (traced != -1 || errno != EPERM)) bad |= 8;
    if (ioctl(-1, 0xAA00 /* USERFAULTFD_IOC_NEW */) != -1 || errno != EPERM) bad |= 64;  // else EBADF
    char name[32] = {};
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0 || ioctl(-1, 0x5401 /* TCGETS */) != -1 || errno != EBADF)
      bad |= 16;  // the same calls with other arguments pass
    timex tx{};  // a read-only query, allowed to anyone without the filter
    if (adjtimex(&tx) != -1 || errno != EPERM) bad |= 32;
    if (getpid() <= 0 || lock_down_process() != "") bad |= 16;  // others pass; again: inherited
    _exit(bad);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 seccomp, 2 prctl, 4 userfaultfd, 8 ptrace, 16 others, 32 adjtimex, 64 ioctl; 10 not installed";
}
