// The verdict's checks beyond the first call (docs/cli.md, "The verdict"): what the timed calls
// wrote, what ran outside the timed stream, one more call on fresh operands in the same buffers
// (recheck), and the physical floor (src/measure/floor.hpp). run_case gathers and runs them;
// this file holds their logic.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "src/measure/measure.hpp"
#include "src/report/result.hpp"
#include "src/verify/verify.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// Timed samples verified after timing (all when fewer), and elements gathered from all of a
// run's outputs together (at least kMinGatheredPerSlot from each; every element of a small C).
// Per recheck where the reference is the CPU: kRecheckSamples elements.
constexpr int kVerifiedSamples = 32;
constexpr int64_t kGatheredPerRun = 4096;
constexpr int64_t kMinGatheredPerSlot = 256;
constexpr int64_t kRecheckSamples = 4096;

// The recheck's operands: another seed than the case's (never equal to it).
uint64_t recheck_seed(uint64_t seed);

// 64 bits from the operating system's random source: the verdict's secret.
uint64_t secret_from_os();
// Seeds drawn from the secret for run `run` (warm-ups and samples counted together): the
// operands of its launch `launch`, its C fill (slot k: fill_seed + k), its gathered elements.
// Drawn through a keyed PRF (siphash.hpp): none of them, nor the secret, follows from another.
uint64_t call_seed(uint64_t secret, int64_t run, int launch);
uint64_t fill_seed(uint64_t secret, int64_t run);
uint64_t gather_seed(uint64_t secret, int64_t run);
// The seed of the coordinates a check samples (`what`: kCoordsRecheck, kCoordsFirstCall).
constexpr uint64_t kCoordsRecheck = 1, kCoordsFirstCall = 2;
uint64_t coords_seed(uint64_t secret, uint64_t what);
// Elements gathered from each of `slots` outputs of `c_elems` elements.
int64_t gathered_per_slot(int64_t c_elems, int slots);

// The reference's values at flat [L, M, N] indices `idx` of C for the operands of seed `seed`.
using ExpectedAt = std::function<std::vector<uint16_t>(uint64_t seed, const std::vector<int64_t>& idx)>;

// What the timed runs wrote at the gathered elements. Every sample is offered; a reservoir drawn
// from the secret keeps kVerifiedSamples of them, so which ones are verified is settled only
// when timing ends. Judged once the reference can be run again.
class TimedOutputs {
 public:
  TimedOutputs(const Shape& s, uint64_t secret, int slots, int keep = kVerifiedSamples);
  int slots() const { return slots_; }
  int64_t per_slot() const { return per_slot_; }
  // After run `run` (sample `sample`, -1 for a warm-up): its outputs gathered, [slots][per_slot].
  void offer(int64_t run, int64_t sample, const uint16_t* gathered);
  // --check-every-call: the outputs are checked in full as they come (count_checked after each
  // run), nothing is left to judge after timing.
  void check_every_call() { every_call_ = true; }
  void count_checked(int64_t outputs, int64_t elements, bool sample);
  TimedOutputsCheck judge(const ExpectedAt& expected, const Tolerance& tol) const;

 private:
  struct Kept {
    int64_t run = 0, sample = 0;
    std::vector<uint16_t> values;
  };
  Shape s_;
  uint64_t secret_;
  int slots_;
  int64_t per_slot_;
  int keep_;
  int64_t runs_ = 0, offered_ = 0;
  bool every_call_ = false;
  int64_t checked_samples_ = 0, checked_outputs_ = 0, checked_elements_ = 0;
  uint64_t draw_;  // the reservoir's draws so far (each one secret_draw(secret, reservoir, n))
  std::vector<Kept> kept_;
};

// One output of a timed run against the reference at the same elements (`idx`, flat; empty:
// every element in order): empty when
// right, else the failure line, naming the call as `what`. Elements still holding the tool's fill
// (fill_seed + slot) are counted as unwritten.
std::string judge_output(const Shape& s, const std::vector<int64_t>& idx, const uint16_t* got,
                         const std::vector<uint16_t>& expected, uint64_t fill, const Tolerance& tol,
                         const std::string& what, int64_t* elements = nullptr);

// The recheck's outcome from the kernel's output on the fresh operands, compared with `ref` at
// `coords` (empty: every element).
Recheck judge_recheck(const Shape& s, uint64_t seed, const std::string& against,
                      const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref,
                      const std::vector<Coord>& coords, const Tolerance& tol);

// A passed case whose verdict checks failed becomes incorrect, with the first failure's line.
void apply_verdict(CaseResult& r);

}  // namespace nvfp4
