// The fused kernel's time line, for diagnosis (docs/kernels.md, "Stamps"): where
// DeviceState::fused_stamps is set, launch_fused's kernel has one thread per CTA record clock64
// at each work unit's boundaries, so the cycles of a unit split into fill, K loop, split-K
// reduction and epilogue - what ncu's whole-kernel averages cannot separate. Off (a null
// pointer) in every timed run; bench/sm90_stamps.cu reads it. The streaming kernel's time line
// (StreamStampLayout, below) is the same idea per CTA phase. Pure host C++ here: the layouts the
// kernels write and their summaries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfp4::sm90 {

// Per CTA (blockIdx.x): a header of kStampHeader words, then kStampUnit words for each of its
// first `units_per_cta` units (later ones are counted, not recorded).
struct StampLayout {
  static constexpr int kHeader = 8;
  static constexpr int kUnit = 8;
  // header words
  static constexpr int kEntryNs = 0;     // %globaltimer at the CTA's start
  static constexpr int kEntryClk = 1;    // clock64 at the CTA's start
  static constexpr int kAReadyClk = 2;   // clock64 when the A producer passed griddepcontrol.wait
  static constexpr int kEndNs = 3;       // %globaltimer after the consumers' last unit
  static constexpr int kEndClk = 4;      // clock64 then
  static constexpr int kUnits = 5;       // units the CTA ran (recorded or not)
  static constexpr int kSm = 6;          // %smid
  // unit words
  static constexpr int kOrder = 0;       // the tile's order (walk.hpp WorkUnit::order)
  static constexpr int kBlocks = 1;      // kb0 | kb1 << 32: the unit's K blocks [kb0, kb1)
  static constexpr int kSplit = 2;       // split | splits << 32 | stored << 63 (this unit wrote C)
  static constexpr int kBeginClk = 3;    // the unit's start (consumers)
  static constexpr int kFirstClk = 4;    // its first K block decoded (its first B stage arrived)
  static constexpr int kLoopClk = 5;     // its last wgmma retired
  static constexpr int kReducedClk = 6;  // split-K done (= kLoopClk at one split)
  static constexpr int kEndClk_ = 7;     // its epilogue's stores issued (or the split handed over)

  // Where CTA `cta`'s header starts (unit < 0), or its unit `unit`'s record; the kernel
  // (relaxed constexpr), the reader and the tests all place words by it.
  static constexpr size_t at(int cta, int unit, int units_per_cta) {
    return size_t(cta) * (kHeader + size_t(kUnit) * units_per_cta) +
           (unit < 0 ? 0 : kHeader + size_t(kUnit) * unit);
  }
  static constexpr size_t words(int ctas, int units_per_cta) { return at(ctas, -1, units_per_cta); }
};

// What one CTA's unit cost, in SM cycles.
struct UnitStamps {
  int cta = 0, sm = 0, order = 0, kb0 = 0, kb1 = 0, split = 0, splits = 1;
  bool stored = false;
  int64_t begin = 0;                                // cycles since the CTA's start
  int64_t fill = 0, loop = 0, reduce = 0, epilogue = 0;  // the unit's four parts
};

// One CTA's record: when it ran (ns after the first CTA's start, %globaltimer) and what it did.
struct CtaStamps {
  int cta = 0, sm = 0;
  int64_t units = 0, kblocks = 0;          // units run; K blocks of its recorded units
  double start_ns = 0, end_ns = 0;
  int64_t a_ready = -1;                    // cycles from its start to the A prepass's data (-1: none)
  int64_t busy = 0, loop = 0;              // cycles: start to end, and inside recorded K loops
};

struct StampSummary {
  int ctas = 0;
  std::vector<CtaStamps> cta;  // CTAs that ran a unit
  int64_t units = 0, units_recorded = 0, kblocks = 0;  // kblocks: sum over recorded units
  std::vector<UnitStamps> unit;
  // ns, from %globaltimer: the last CTA's start after the first's, and the kernel's span
  double start_spread_ns = 0, span_ns = 0, end_spread_ns = 0;
  // cycles, medians over CTAs: start to the A prepass's data (PDL wait), start to the last unit's end
  double a_ready_cycles = 0, cta_cycles = 0;
  // cycles, medians over recorded units
  double fill = 0, loop_per_kblock = 0, reduce = 0, reduce_last = 0, epilogue = 0;
  // share of the CTAs' cycles (start to end) inside units' K loops, and in fills
  double loop_share = 0, fill_share = 0;
};

// Reads `words` (StampLayout, `ctas` CTAs, `units_per_cta` each). Throws std::runtime_error
// naming the CTA and word where the record cannot be one the kernel wrote (a clock running
// backwards, K blocks out of order, more units recorded than the room).
StampSummary summarize_stamps(const std::vector<uint64_t>& words, int ctas, int units_per_cta);

// The summary as text: totals, the medians above, the latest tenth of CTAs to end against the
// rest (what makes the ends' spread: more K blocks, a slower K loop, or a later start or A), and a
// table of the parts by unit length.
std::string format_stamps(const StampSummary& s, double sm_mhz);

// One line per CTA, comma-separated with a header: cta, sm, units, kblocks, start_ns, end_ns,
// a_ready_cycles, busy_cycles, loop_cycles.
std::string format_stamps_per_cta(const StampSummary& s);

// ---- the streaming path's time line (stream_kernel.cuh) ----
// Where DeviceState::stream_stamps is set, thread 0 of each CTA of the streaming kernel writes
// %globaltimer at its phase boundaries, each after the CTA's barrier where the phase is the whole
// CTA's (two barriers the kernel has only then): kWords words a CTA.
struct StreamStampLayout {
  static constexpr int kWords = 8;
  static constexpr int kStartNs = 0;   // the CTA's start
  static constexpr int kSlabNs = 1;    // the A slab written (the barrier after it)
  static constexpr int kLoopNs = 2;    // every warp's units done (the barrier after the loop)
  static constexpr int kArriveNs = 3;  // the pieces its warps share stored: it arrives at the grid barrier
  static constexpr int kPassNs = 4;    // the grid barrier passed
  static constexpr int kEndNs = 5;     // its share of the panels summed and C written (every warp)
  static constexpr int kSm = 6;        // %smid
  static constexpr int kUnits = 7;     // units the CTA holds
  static constexpr size_t at(int cta) { return size_t(cta) * kWords; }
  static constexpr size_t words(int ctas) { return at(ctas); }
};

// The phases of a streaming call: per CTA the ns between consecutive stamps, and when the grid's
// CTAs reach each boundary (ns after the first CTA's start).
struct StreamStampSummary {
  static constexpr int kBoundaries = 6;  // the six stamps: start, slab, loop, arrive, pass, end
  static constexpr int kPhases = kBoundaries - 1;  // slab, loop, shared pieces, barrier wait, final sums
  static constexpr const char* kPhaseNames[kPhases] = {"A slab", "loop", "shared pieces", "grid barrier wait",
                                                       "final sums"};
  int ctas = 0;
  int64_t units = 0, most_units = 0, fewest_units = 0;  // over the CTAs
  double span_ns = 0;                                  // the first start to the last end
  double phase_median_ns[kPhases] = {}, phase_max_ns[kPhases] = {};  // per CTA
  // boundaries, ns after the first start: the first / median / last CTA to reach each of the six
  // stamps (start, slab, loop, arrive, pass, end)
  double first_ns[kBoundaries] = {}, median_ns[kBoundaries] = {}, last_ns[kBoundaries] = {};
  struct Cta {
    int cta = 0, sm = 0;
    int64_t units = 0;
    double at_ns[kBoundaries] = {};  // its six stamps, ns after the first CTA's start
  };
  std::vector<Cta> cta;  // every CTA, in blockIdx order
};

// Reads `words` (StreamStampLayout, `ctas` CTAs). Throws std::runtime_error naming the CTA where a
// record cannot be one the kernel wrote (a stamp missing or earlier than the one before it, a
// grid barrier passed before the last CTA arrived).
StreamStampSummary summarize_stream_stamps(const std::vector<uint64_t>& words, int ctas);

// The summary as text: the span, per phase the median and slowest CTA, and when the CTAs reach
// each boundary.
std::string format_stream_stamps(const StreamStampSummary& s);

// One line per CTA, comma-separated with a header: cta, sm, units, then its six stamps (ns after
// the first CTA's start): start_ns, slab_ns, loop_ns, arrive_ns, pass_ns, end_ns.
std::string format_stream_stamps_per_cta(const StreamStampSummary& s);

}  // namespace nvfp4::sm90
