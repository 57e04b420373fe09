// The verdict's checks beyond the first call (docs/cli.md, "The verdict"): what the timed calls
// wrote, one more call on fresh operands in the same buffers (recheck), and the physical floor
// (src/measure/floor.hpp). run_case gathers and runs them; this file holds their logic.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "src/measure/measure.hpp"
#include "src/report/result.hpp"
#include "src/verify/verify.hpp"

namespace nvfp4 {

// Elements compared per timed output, and per recheck where the reference is the CPU.
constexpr int64_t kTimedCheckElements = 4096;
constexpr int64_t kRecheckSamples = 4096;

// The recheck's operands: another seed than the case's (never equal to it).
uint64_t recheck_seed(uint64_t seed);

// Output buffers for the operand copies of rotate/graph timing (copy i writes slot i % slots):
// one per copy while they fit in 3x L2 together, so the last call of each copy can be checked.
int output_slots(int copies, int64_t c_bytes, size_t l2_bytes);

// The coordinates compared in each timed output: every element of a small C, else a sample
// (corners first). `known`: where the reference is known when it was sampled (empty: all of C).
std::vector<Coord> timed_check_coords(const Shape& s, const std::vector<Coord>& known, uint64_t seed);

// What the timed calls wrote at the check coordinates, per checked sample and output slot,
// judged once the reference is known.
class TimedOutputs {
 public:
  TimedOutputs(const Shape& s, std::vector<Coord> coords, int slots);
  // After a checked sample: `slot_data(k)` is output slot k as the batch's calls left it. Only
  // the slots some call of the batch wrote are read.
  void gather(const TimedBatch& b, const std::function<const uint16_t*(int slot)>& slot_data);
  // Every gathered output against `ref` (an [L, M, N] buffer right at the coordinates).
  TimedOutputsCheck judge(const std::vector<uint16_t>& ref, const Tolerance& tol) const;
  int slots() const { return slots_; }

 private:
  struct Got {
    TimedBatch batch;
    int slot = 0, launch = 0, copy = 0;  // the batch's last call writing the slot
    std::vector<uint16_t> values;
  };
  Shape s_;
  std::vector<Coord> coords_;
  int slots_;
  std::vector<Got> got_;
};

// The recheck's outcome from the kernel's output on the fresh operands, compared with `ref` at
// `coords` (empty: every element).
Recheck judge_recheck(const Shape& s, uint64_t seed, const std::string& against,
                      const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref,
                      const std::vector<Coord>& coords, const Tolerance& tol);

// A passed case whose verdict checks failed becomes incorrect, with the first failure's line.
void apply_verdict(CaseResult& r);

}  // namespace nvfp4
