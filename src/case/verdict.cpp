#include "src/case/verdict.hpp"

#include <fmt/format.h>

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/core/error.hpp"
#include "src/core/siphash.hpp"
#include "src/problem/generate.hpp"


namespace nvfp4 {

uint64_t recheck_seed(uint64_t seed) { return seed ^ 0x9e3779b97f4a7c15ull; }

uint64_t secret_from_os() {
  uint64_t v = 0;
  // getrandom(2) fills up to 256 bytes at once unless interrupted before any byte.
  for (;;) {
    const ssize_t got = getrandom(&v, sizeof v, 0);
    if (got == ssize_t(sizeof v)) return v;
    if (got < 0 && errno != EINTR)
      throw runtime_error(fmt::format("getrandom: {}", std::strerror(errno)));
  }
}

// Every seed drawn from the secret goes through a keyed PRF, each kind of draw in its own domain
// (the first word of the message): a kernel that recovers one call's operand seed from its
// operands (the generator's mixer can be undone step by step) learns nothing of the secret, of
// another call's seeds or of which elements will be gathered (docs/cli.md, "The verdict").
namespace {
enum : uint64_t { kCallDraw = 1, kFillDraw, kGatherDraw, kReservoirDraw, kCoordsDraw };
constexpr uint64_t kVerdictKey1 = 0x6e76667034626e63ull;  // the key's other half: a constant

// The PRF itself: 64 bits for (domain, value) under the secret.
uint64_t secret_draw(uint64_t secret, uint64_t domain, uint64_t value) {
  return siphash24(secret, kVerdictKey1, domain, value);
}
}  // namespace
uint64_t call_seed(uint64_t secret, int64_t run, int launch) {
  return secret_draw(secret, kCallDraw, uint64_t(run) * 4096u + uint64_t(launch));
}
uint64_t fill_seed(uint64_t secret, int64_t run) { return secret_draw(secret, kFillDraw, uint64_t(run)); }
uint64_t gather_seed(uint64_t secret, int64_t run) { return secret_draw(secret, kGatherDraw, uint64_t(run)); }
uint64_t coords_seed(uint64_t secret, uint64_t what) { return secret_draw(secret, kCoordsDraw, what); }

int64_t gathered_per_slot(int64_t c_elems, int slots) {
  const int64_t even = kGatheredPerRun / std::max(1, slots);
  return std::min(c_elems, std::max(even, kMinGatheredPerSlot));
}

TimedOutputs::TimedOutputs(const Shape& s, uint64_t secret, int slots, int keep)
    : s_(s), secret_(secret), slots_(std::max(1, slots)),
      per_slot_(gathered_per_slot(s.l * s.m * s.n, std::max(1, slots))), keep_(std::max(1, keep)),
      draw_(0) {}

void TimedOutputs::offer(int64_t run, int64_t sample, const uint16_t* gathered) {
  ++runs_;
  if (sample < 0) return;
  // Reservoir sampling (Algorithm R): after n offers each sample is kept with probability keep/n.
  ++offered_;
  int64_t slot = int64_t(kept_.size());
  if (slot >= keep_) {
    slot = int64_t(secret_draw(secret_, kReservoirDraw, draw_++) % uint64_t(offered_));
    if (slot >= keep_) return;
  } else {
    kept_.emplace_back();
  }
  Kept& k = kept_[size_t(slot)];
  k.run = run;
  k.sample = sample;
  k.values.assign(gathered, gathered + size_t(slots_) * size_t(per_slot_));
}

std::string judge_output(const Shape& s, const std::vector<int64_t>& idx, const uint16_t* got,
                         const std::vector<uint16_t>& expected, uint64_t fill, const Tolerance& tol,
                         const std::string& what, int64_t* elements) {
  Verifier v(tol, "sampled", 1);
  int64_t left = 0;
  const auto coord = [&](int64_t flat) {
    return Coord{flat / (s.m * s.n), flat / s.n % s.m, flat % s.n};
  };
  const size_t n = idx.empty() ? expected.size() : idx.size();
  for (size_t t = 0; t < n; ++t) {
    const int64_t e = idx.empty() ? int64_t(t) : idx[t];
    v.check(coord(e), got[t], expected[t]);
    if (got[t] == random_finite_fp16(fill, uint64_t(e)) && got[t] != expected[t]) ++left;
  }
  if (elements) *elements += v.result().checked;
  const VerifyResult& r = v.result();
  if (r.passed()) return {};
  const Mismatch& m = r.first.front();
  return fmt::format("{} wrote a wrong output: {} of {} checked elements wrong ({} left as the "
                     "tool's random fill), first at l={} i={} j={}: got {}, expected {}",
                     what, r.mismatches, r.checked, left, m.at.batch, m.at.i, m.at.j, m.got,
                     m.expected);
}

void TimedOutputs::count_checked(int64_t outputs, int64_t elements, bool sample) {
  checked_samples_ += sample ? 1 : 0;
  checked_outputs_ += outputs;
  checked_elements_ += elements;
}

TimedOutputsCheck TimedOutputs::judge(const ExpectedAt& expected, const Tolerance& tol) const {
  TimedOutputsCheck t;
  t.done = true;
  t.secret_seed = secret_;
  t.runs = runs_;
  t.slots = slots_;
  t.coords = per_slot_;
  if (every_call_) {
    t.every_call = true;
    t.samples = checked_samples_;
    t.outputs = checked_outputs_;
    t.elements = checked_elements_;
    t.coords = s_.l * s_.m * s_.n;
    return t;
  }
  std::vector<const Kept*> order;
  for (const Kept& k : kept_) order.push_back(&k);
  std::sort(order.begin(), order.end(), [](const Kept* a, const Kept* b) { return a->sample < b->sample; });
  const int64_t c_elems = s_.l * s_.m * s_.n;
  for (const Kept* k : order) {
    ++t.samples;
    const uint64_t gseed = gather_seed(secret_, k->run);
    for (int slot = 0; slot < slots_; ++slot) {
      std::vector<int64_t> idx(static_cast<size_t>(per_slot_));
      for (int64_t e = 0; e < per_slot_; ++e) idx[size_t(e)] = gathered_index(gseed, slot, e, c_elems, per_slot_);
      const std::vector<uint16_t> ref = expected(call_seed(secret_, k->run, slot), idx);
      ++t.outputs;
      const std::string what =
          slots_ > 1 ? fmt::format("timed sample {} (call {} of {}, verified after timing)", k->sample,
                                   slot + 1, slots_)
                     : fmt::format("timed sample {} (its one call, verified after timing)", k->sample);
      std::string f = judge_output(s_, idx, k->values.data() + size_t(slot) * size_t(per_slot_), ref,
                                   fill_seed(secret_, k->run) + uint64_t(slot), tol, what, &t.elements);
      if (t.failure.empty()) t.failure = std::move(f);
    }
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
  } else if (!v.isolation.failure.empty()) {
    why = v.isolation.failure;
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
