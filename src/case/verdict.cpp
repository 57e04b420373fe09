#include "src/case/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>


namespace nvfp4 {

uint64_t recheck_seed(uint64_t seed) { return seed ^ 0x9e3779b97f4a7c15ull; }

int output_slots(int copies, int64_t c_bytes, size_t l2_bytes) {
  const int64_t budget = 3 * int64_t(l2_bytes ? l2_bytes : (64u << 20));
  const int64_t fit = c_bytes > 0 ? budget / c_bytes : copies;
  return int(std::clamp<int64_t>(fit, 1, std::max(1, copies)));
}

std::vector<Coord> timed_check_coords(const Shape& s, const std::vector<Coord>& known, uint64_t seed) {
  if (!known.empty())
    return {known.begin(), known.begin() + std::min<ptrdiff_t>(ptrdiff_t(known.size()), kTimedCheckElements)};
  const int64_t total = s.l * s.m * s.n;
  if (total > kTimedCheckElements) return sample_coords(s, kTimedCheckElements, seed);
  std::vector<Coord> all;
  for (int64_t b = 0; b < s.l; ++b)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) all.push_back({b, i, j});
  return all;
}

TimedOutputs::TimedOutputs(const Shape& s, std::vector<Coord> coords, int slots)
    : s_(s), coords_(std::move(coords)), slots_(std::max(1, slots)) {}

void TimedOutputs::gather(const TimedBatch& b,
                          const std::function<const uint16_t*(int slot)>& slot_data) {
  const int copies = std::max(1, b.copies);
  for (int slot = 0; slot < slots_; ++slot) {
    int launch = -1;  // the batch's last call writing this slot
    for (int j = b.launches - 1; j >= 0 && launch < 0; --j)
      if ((b.first_copy + j) % copies % slots_ == slot) launch = j;
    if (launch < 0) continue;
    const uint16_t* c = slot_data(slot);
    Got g{b, slot, launch, (b.first_copy + launch) % copies, {}};
    g.values.reserve(coords_.size());
    for (const Coord& at : coords_) g.values.push_back(c[(at.batch * s_.m + at.i) * s_.n + at.j]);
    got_.push_back(std::move(g));
  }
}

TimedOutputsCheck TimedOutputs::judge(const std::vector<uint16_t>& ref, const Tolerance& tol) const {
  TimedOutputsCheck t;
  t.done = true;
  t.slots = slots_;
  t.coords = int64_t(coords_.size());
  int64_t last_attempt = -1;
  for (const Got& g : got_) {
    if (g.batch.attempt != last_attempt) ++t.samples;
    last_attempt = g.batch.attempt;
    ++t.outputs;
    Verifier v(tol, "sampled", 1);
    for (size_t k = 0; k < coords_.size(); ++k) {
      const Coord& at = coords_[k];
      v.check(at, g.values[k], ref[size_t((at.batch * s_.m + at.i) * s_.n + at.j)]);
    }
    t.elements += v.result().checked;
    if (v.result().passed() || !t.failure.empty()) continue;
    const VerifyResult& r = v.result();
    const Mismatch& m = r.first.front();
    const std::string call =
        g.batch.launches > 1
            ? fmt::format("call {} of {}, operand copy {}", g.launch + 1, g.batch.launches, g.copy)
            : std::string("its one call");
    t.failure = fmt::format("timed sample {} ({}) wrote a wrong output: {} of {} checked elements "
                            "wrong ({} unwritten), first at l={} i={} j={}: got {}, expected {}",
                            g.batch.attempt, call, r.mismatches, r.checked, r.unwritten,
                            m.at.batch, m.at.i, m.at.j, m.got, m.expected);
  }
  return t;
}

Recheck judge_recheck(const Shape& s, uint64_t seed, const std::string& against,
                      const std::vector<uint16_t>& got, const std::vector<uint16_t>& ref,
                      const std::vector<Coord>& coords, const Tolerance& tol) {
  Recheck rc;
  rc.done = true;
  rc.seed = seed;
  rc.against = against;
  if (coords.empty()) {
    rc.result = verify_full(s, got.data(), ref.data(), tol);
    return rc;
  }
  Verifier v(tol, "sampled");
  for (size_t k = 0; k < coords.size(); ++k) {
    const Coord& at = coords[k];
    v.check(at, got[size_t((at.batch * s.m + at.i) * s.n + at.j)], ref[k]);
  }
  rc.result = v.result();
  return rc;
}

void apply_verdict(CaseResult& r) {
  if (!r.verdict || r.disposition != Disposition::Passed) return;
  const VerdictChecks& v = *r.verdict;
  std::string why;
  if (!v.timed.failure.empty()) {
    why = v.timed.failure;
  } else if (v.recheck.done && !v.recheck.result.passed()) {
    const VerifyResult& x = v.recheck.result;
    why = fmt::format("recheck on fresh operands in the same buffers (seed {}) failed: {} of {} "
                      "checked elements wrong ({} unwritten): the kernel's output does not follow "
                      "its inputs",
                      v.recheck.seed, x.mismatches, x.checked, x.unwritten);
  } else if (!v.floor_failure.empty()) {
    why = v.floor_failure;
  }
  if (why.empty()) return;
  r.disposition = Disposition::Incorrect;
  r.message = why;
}

}  // namespace nvfp4
