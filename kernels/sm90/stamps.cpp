// The fused and the streaming kernel's stamps read back (stamps.hpp).
#include "kernels/sm90/stamps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace nvfp4::sm90 {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

[[noreturn]] void bad(int cta, int unit, const std::string& what) {
  throw std::runtime_error(unit < 0 ? fmt::format("stamps: CTA {}: {}", cta, what)
                                    : fmt::format("stamps: CTA {} unit {}: {}", cta, unit, what));
}

}  // namespace

StampSummary summarize_stamps(const std::vector<uint64_t>& words, int ctas, int units_per_cta) {
  using L = StampLayout;
  if (ctas < 1 || units_per_cta < 1) throw std::runtime_error("stamps: no CTAs or no room for units");
  if (words.size() != L::words(ctas, units_per_cta))
    throw std::runtime_error(fmt::format("stamps: {} words, expected {} for {} CTAs x {} units", words.size(),
                                         L::words(ctas, units_per_cta), ctas, units_per_cta));
  StampSummary s;
  s.ctas = ctas;
  std::vector<double> a_ready, cta_cycles, fill, loop_kb, reduce, reduce_last, epi;
  double loops = 0, fills = 0, busy = 0;
  uint64_t first_start = UINT64_MAX, last_start = 0, first_end = UINT64_MAX, last_end = 0;
  for (int c = 0; c < ctas; ++c) {
    const uint64_t* h = words.data() + L::at(c, -1, units_per_cta);
    const int64_t units = static_cast<int64_t>(h[L::kUnits]);
    if (units < 0 || units > (int64_t(1) << 40)) bad(c, -1, fmt::format("unit count {}", units));
    s.units += units;
    if (units == 0) continue;
    const uint64_t clk0 = h[L::kEntryClk];
    if (h[L::kEndClk] < clk0 || h[L::kEndNs] < h[L::kEntryNs]) bad(c, -1, "ends before it starts");
    if (h[L::kAReadyClk] != 0) {
      if (h[L::kAReadyClk] < clk0) bad(c, -1, "A ready before the start");
      a_ready.push_back(double(h[L::kAReadyClk] - clk0));
    }
    first_start = std::min(first_start, h[L::kEntryNs]);
    last_start = std::max(last_start, h[L::kEntryNs]);
    first_end = std::min(first_end, h[L::kEndNs]);
    last_end = std::max(last_end, h[L::kEndNs]);
    cta_cycles.push_back(double(h[L::kEndClk] - clk0));
    busy += double(h[L::kEndClk] - clk0);
    CtaStamps cs;
    cs.cta = c;
    cs.sm = static_cast<int>(h[L::kSm]);
    cs.units = units;
    cs.start_ns = double(h[L::kEntryNs]);  // made relative below
    cs.end_ns = double(h[L::kEndNs]);
    cs.a_ready = h[L::kAReadyClk] != 0 ? int64_t(h[L::kAReadyClk] - clk0) : -1;
    cs.busy = int64_t(h[L::kEndClk] - clk0);
    uint64_t prev = clk0;
    const int rec = static_cast<int>(std::min<int64_t>(units, units_per_cta));
    for (int u = 0; u < rec; ++u) {
      const uint64_t* w = words.data() + L::at(c, u, units_per_cta);
      UnitStamps x;
      x.cta = c;
      x.sm = static_cast<int>(h[L::kSm]);
      x.order = static_cast<int>(w[L::kOrder]);
      x.kb0 = static_cast<int>(w[L::kBlocks] & 0xffffffffu);
      x.kb1 = static_cast<int>(w[L::kBlocks] >> 32);
      x.split = static_cast<int>(w[L::kSplit] & 0xffffffffu);
      x.splits = static_cast<int>((w[L::kSplit] >> 32) & 0x7fffffffu);
      x.stored = (w[L::kSplit] >> 63) != 0;
      if (x.kb1 <= x.kb0) bad(c, u, fmt::format("K blocks [{}, {})", x.kb0, x.kb1));
      if (x.splits < 1 || x.split >= x.splits) bad(c, u, fmt::format("split {} of {}", x.split, x.splits));
      const uint64_t t[5] = {w[L::kBeginClk], w[L::kFirstClk], w[L::kLoopClk], w[L::kReducedClk], w[L::kEndClk_]};
      if (t[0] < prev) bad(c, u, "starts before the previous unit ended");
      for (int i = 1; i < 5; ++i)
        if (t[i] < t[i - 1]) bad(c, u, fmt::format("stamp {} before stamp {}", i, i - 1));
      if (t[4] > h[L::kEndClk]) bad(c, u, "ends after the CTA");
      prev = t[4];
      x.begin = int64_t(t[0] - clk0);
      x.fill = int64_t(t[1] - t[0]);
      x.loop = int64_t(t[2] - t[1]);
      x.reduce = int64_t(t[3] - t[2]);
      x.epilogue = int64_t(t[4] - t[3]);
      const int nkb = x.kb1 - x.kb0;
      s.kblocks += nkb;
      fill.push_back(double(x.fill));
      loop_kb.push_back(double(x.loop) / nkb);
      if (x.splits > 1) (x.stored ? reduce_last : reduce).push_back(double(x.reduce));
      if (x.stored) epi.push_back(double(x.epilogue));
      loops += double(x.loop);
      fills += double(x.fill);
      cs.kblocks += nkb;
      cs.loop += x.loop;
      s.unit.push_back(x);
    }
    s.units_recorded += rec;
    s.cta.push_back(cs);
  }
  if (s.unit.empty()) throw std::runtime_error("stamps: no unit recorded (was the kernel launched with them?)");
  for (CtaStamps& c : s.cta) {
    c.start_ns -= double(first_start);
    c.end_ns -= double(first_start);
  }
  s.start_spread_ns = double(last_start - first_start);
  s.end_spread_ns = double(last_end - first_end);
  s.span_ns = double(last_end - first_start);
  s.a_ready_cycles = median(a_ready);
  s.cta_cycles = median(cta_cycles);
  s.fill = median(fill);
  s.loop_per_kblock = median(loop_kb);
  s.reduce = median(reduce);
  s.reduce_last = median(reduce_last);
  s.epilogue = median(epi);
  s.loop_share = busy > 0 ? loops / busy : 0;
  s.fill_share = busy > 0 ? fills / busy : 0;
  return s;
}

std::string format_stamps(const StampSummary& s, double sm_mhz) {
  std::string out = fmt::format(
      "stamps: {} CTAs, {} units ({} recorded), {} K blocks recorded\n"
      "kernel: {:.2f} us from the first CTA's start to the last one's end; starts spread over {:.2f} us, "
      "ends over {:.2f} us\n",
      s.ctas, s.units, s.units_recorded, s.kblocks, s.span_ns / 1e3, s.start_spread_ns / 1e3,
      s.end_spread_ns / 1e3);
  const auto us = [&](double cycles) { return sm_mhz > 0 ? cycles / sm_mhz : 0.0; };
  out += fmt::format("per CTA (median cycles): the prepass's A after {:.0f} ({:.2f} us), busy {:.0f} ({:.2f} us)\n",
                     s.a_ready_cycles, us(s.a_ready_cycles), s.cta_cycles, us(s.cta_cycles));
  out += fmt::format(
      "per unit (median cycles): fill {:.0f}, K loop {:.0f} per K block, split-K hand-over {:.0f}, "
      "last arriver's sum {:.0f}, epilogue {:.0f}\n",
      s.fill, s.loop_per_kblock, s.reduce, s.reduce_last, s.epilogue);
  out += fmt::format("share of the CTAs' cycles: K loops {:.1f} %, fills {:.1f} %, the rest {:.1f} %\n",
                     100 * s.loop_share, 100 * s.fill_share, 100 * (1 - s.loop_share - s.fill_share));
  // the latest tenth of CTAs to end against the rest: where the ends' spread comes from
  if (s.cta.size() >= 10) {
    std::vector<const CtaStamps*> order;
    for (const CtaStamps& c : s.cta) order.push_back(&c);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->end_ns < b->end_ns; });
    const size_t cut = order.size() - order.size() / 10;
    const auto part = [&](size_t b, size_t e) {
      std::vector<double> kb, rate, start, a, end;
      for (size_t i = b; i < e; ++i) {
        const CtaStamps& c = *order[i];
        kb.push_back(double(c.kblocks));
        if (c.kblocks > 0) rate.push_back(double(c.loop) / double(c.kblocks));
        start.push_back(c.start_ns / 1e3);
        if (c.a_ready >= 0) a.push_back(double(c.a_ready));
        end.push_back(c.end_ns / 1e3);
      }
      return fmt::format("end {:.2f} us, {:.0f} K blocks at {:.0f} cycles each, start {:.2f} us, A after {:.0f} cycles",
                         median(end), median(kb), median(rate), median(start), median(a));
    };
    out += fmt::format("ends (medians): the latest tenth of CTAs {}; the rest {}\n", part(cut, order.size()),
                       part(0, cut));
  }
  // by unit length: where fixed costs per unit meet the per-block rate
  std::map<int, std::vector<const UnitStamps*>> by;
  for (const UnitStamps& u : s.unit) by[u.kb1 - u.kb0].push_back(&u);
  out += "| K blocks | units | fill | K loop per K block | hand-over / sum | epilogue |\n|---|---|---|---|---|---|\n";
  for (const auto& [nkb, v] : by) {
    std::vector<double> f, l, r, e;
    for (const UnitStamps* u : v) {
      f.push_back(double(u->fill));
      l.push_back(double(u->loop) / nkb);
      if (u->splits > 1) r.push_back(double(u->reduce));
      if (u->stored) e.push_back(double(u->epilogue));
    }
    out += fmt::format("| {} | {} | {:.0f} | {:.0f} | {} | {} |\n", nkb, v.size(), median(f), median(l),
                       r.empty() ? std::string("-") : fmt::format("{:.0f}", median(r)),
                       e.empty() ? std::string("-") : fmt::format("{:.0f}", median(e)));
  }
  return out;
}

std::string format_stamps_per_cta(const StampSummary& s) {
  std::string out = "cta,sm,units,kblocks,start_ns,end_ns,a_ready_cycles,busy_cycles,loop_cycles\n";
  for (const CtaStamps& c : s.cta)
    out += fmt::format("{},{},{},{},{:.0f},{:.0f},{},{},{}\n", c.cta, c.sm, c.units, c.kblocks, c.start_ns, c.end_ns,
                       c.a_ready, c.busy, c.loop);
  return out;
}

StreamStampSummary summarize_stream_stamps(const std::vector<uint64_t>& words, int ctas) {
  using L = StreamStampLayout;
  if (ctas < 1) throw std::runtime_error("stream stamps: no CTAs");
  if (words.size() != L::words(ctas))
    throw std::runtime_error(fmt::format("stream stamps: {} words, expected {} for {} CTAs", words.size(), L::words(ctas), ctas));
  constexpr int kStamps[StreamStampSummary::kBoundaries] = {L::kStartNs, L::kSlabNs, L::kLoopNs, L::kArriveNs, L::kPassNs, L::kEndNs};
  StreamStampSummary s;
  s.ctas = ctas;
  uint64_t t0 = UINT64_MAX, last_arrive = 0, first_pass = UINT64_MAX;
  s.fewest_units = INT64_MAX;
  for (int c = 0; c < ctas; ++c) {
    const uint64_t* h = words.data() + L::at(c);
    for (int b = 0; b < StreamStampSummary::kBoundaries; ++b) {
      if (h[kStamps[b]] == 0) bad(c, -1, fmt::format("stamp {} missing", b));
      if (b > 0 && h[kStamps[b]] < h[kStamps[b - 1]]) bad(c, -1, fmt::format("stamp {} before stamp {}", b, b - 1));
    }
    t0 = std::min(t0, h[L::kStartNs]);
    last_arrive = std::max(last_arrive, h[L::kArriveNs]);
    first_pass = std::min(first_pass, h[L::kPassNs]);
    const int64_t units = static_cast<int64_t>(h[L::kUnits]);
    s.units += units;
    s.most_units = std::max(s.most_units, units);
    s.fewest_units = std::min(s.fewest_units, units);
  }
  if (first_pass < last_arrive) throw std::runtime_error("stream stamps: a CTA passed the grid barrier before the last arrived");
  std::vector<double> phase[StreamStampSummary::kPhases], at[StreamStampSummary::kBoundaries];
  for (int c = 0; c < ctas; ++c) {
    const uint64_t* h = words.data() + L::at(c);
    StreamStampSummary::Cta rec;
    rec.cta = c;
    rec.sm = static_cast<int>(h[L::kSm]);
    rec.units = static_cast<int64_t>(h[L::kUnits]);
    for (int b = 0; b < StreamStampSummary::kBoundaries; ++b) {
      rec.at_ns[b] = double(h[kStamps[b]] - t0);
      at[b].push_back(rec.at_ns[b]);
      if (b > 0) phase[b - 1].push_back(rec.at_ns[b] - rec.at_ns[b - 1]);
    }
    s.cta.push_back(rec);
  }
  for (int f = 0; f < StreamStampSummary::kPhases; ++f) {
    s.phase_median_ns[f] = median(phase[f]);
    s.phase_max_ns[f] = *std::max_element(phase[f].begin(), phase[f].end());
  }
  for (int b = 0; b < StreamStampSummary::kBoundaries; ++b) {
    s.first_ns[b] = *std::min_element(at[b].begin(), at[b].end());
    s.median_ns[b] = median(at[b]);
    s.last_ns[b] = *std::max_element(at[b].begin(), at[b].end());
  }
  s.span_ns = s.last_ns[StreamStampSummary::kBoundaries - 1];
  return s;
}

std::string format_stream_stamps(const StreamStampSummary& s) {
  std::string out = fmt::format("span      {:.2f} us, first CTA start to last CTA end; {} CTAs, {}-{} units a CTA\n",
                                s.span_ns / 1e3, s.ctas, s.fewest_units, s.most_units);
  out += "phase                 median us   slowest CTA us\n";
  for (int f = 0; f < StreamStampSummary::kPhases; ++f)
    out += fmt::format("{:<20} {:>10.2f} {:>16.2f}\n", StreamStampSummary::kPhaseNames[f], s.phase_median_ns[f] / 1e3,
                       s.phase_max_ns[f] / 1e3);
  static constexpr const char* kNames[StreamStampSummary::kBoundaries] = {"start", "slab written", "loop done", "arrives", "passes", "ends"};
  out += "boundary              first us    median us      last us   (after the first CTA's start)\n";
  for (int b = 0; b < StreamStampSummary::kBoundaries; ++b)
    out += fmt::format("{:<20} {:>8.2f} {:>12.2f} {:>12.2f}\n", kNames[b], s.first_ns[b] / 1e3, s.median_ns[b] / 1e3,
                       s.last_ns[b] / 1e3);
  return out;
}

std::string format_stream_stamps_per_cta(const StreamStampSummary& s) {
  std::string out = "cta,sm,units,start_ns,slab_ns,loop_ns,arrive_ns,pass_ns,end_ns\n";
  for (const StreamStampSummary::Cta& c : s.cta)
    out += fmt::format("{},{},{},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f}\n", c.cta, c.sm, c.units, c.at_ns[0],
                       c.at_ns[1], c.at_ns[2], c.at_ns[3], c.at_ns[4], c.at_ns[5]);
  return out;
}

}  // namespace nvfp4::sm90
