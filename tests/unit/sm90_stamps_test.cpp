// The fused kernel's stamps read back (kernels/sm90/stamps.hpp) on records written here the way
// the kernel writes them: the parts of each unit, their medians, and the records no kernel could
// have written refused with the CTA and unit named. The kernel's own records are checked on the
// GPU (tests/gpu/sm90_test.cu, FusedStampsCoverTheSchedule).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/sm90/stamps.hpp"

namespace nvfp4::sm90 {
namespace {

using L = StampLayout;

struct Unit {
  int order, kb0, kb1, split, splits;
  bool stored;
  uint64_t fill, loop, reduce, epilogue;
};

// One CTA per entry of `ctas`; its units back to back from clock 1000, 10 cycles apart.
std::vector<uint64_t> write(const std::vector<std::vector<Unit>>& ctas, int room) {
  std::vector<uint64_t> w(L::words(int(ctas.size()), room), 0);
  for (size_t c = 0; c < ctas.size(); ++c) {
    uint64_t* h = w.data() + L::at(int(c), -1, room);
    uint64_t t = 1000;
    h[L::kEntryNs] = 5000 + 100 * c;
    h[L::kEntryClk] = t;
    h[L::kAReadyClk] = t + 400;
    h[L::kSm] = c;
    int u = 0;
    for (const Unit& x : ctas[c]) {
      t += 10;
      if (u < room) {
        uint64_t* r = w.data() + L::at(int(c), u, room);
        r[L::kOrder] = uint64_t(x.order);
        r[L::kBlocks] = uint64_t(x.kb0) | (uint64_t(x.kb1) << 32);
        r[L::kSplit] = uint64_t(x.split) | (uint64_t(x.splits) << 32) | (uint64_t(x.stored) << 63);
        r[L::kBeginClk] = t;
        r[L::kFirstClk] = t += x.fill;
        r[L::kLoopClk] = t += x.loop;
        r[L::kReducedClk] = t += x.reduce;
        r[L::kEndClk_] = t += x.epilogue;
      } else {
        t += x.fill + x.loop + x.reduce + x.epilogue;
      }
      ++u;
    }
    h[L::kUnits] = uint64_t(u);
    h[L::kEndClk] = t + 5;
    h[L::kEndNs] = h[L::kEntryNs] + (t + 5 - 1000) / 2;  // a 2 GHz clock
  }
  return w;
}

TEST(Sm90Stamps, PartsAndMediansOfEachUnit) {
  // Two CTAs: one runs a whole tile of 8 K blocks, the other two halves of a split tile (4 each).
  const std::vector<std::vector<Unit>> ctas = {
      {{0, 0, 8, 0, 1, true, 300, 8000, 0, 200}},
      {{1, 0, 4, 0, 2, false, 320, 4400, 150, 0}, {1, 4, 8, 1, 2, true, 280, 3600, 900, 220}}};
  const StampSummary s = summarize_stamps(write(ctas, 4), 2, 4);
  EXPECT_EQ(s.ctas, 2);
  EXPECT_EQ(s.units, 3);
  EXPECT_EQ(s.units_recorded, 3);
  EXPECT_EQ(s.kblocks, 16);
  ASSERT_EQ(s.unit.size(), 3u);
  EXPECT_EQ(s.unit[1].fill, 320);
  EXPECT_EQ(s.unit[1].loop, 4400);
  EXPECT_EQ(s.unit[2].kb0, 4);
  EXPECT_EQ(s.unit[2].split, 1);
  EXPECT_TRUE(s.unit[2].stored);
  EXPECT_FALSE(s.unit[1].stored);
  EXPECT_DOUBLE_EQ(s.fill, 300);               // median of 300, 320, 280
  EXPECT_DOUBLE_EQ(s.loop_per_kblock, 1000);   // 1000, 1100, 900 per K block
  EXPECT_DOUBLE_EQ(s.reduce, 150);             // the hand-over of the first split
  EXPECT_DOUBLE_EQ(s.reduce_last, 900);        // the last arriver's sum
  EXPECT_DOUBLE_EQ(s.epilogue, 210);           // the two units that stored C: 200, 220
  EXPECT_DOUBLE_EQ(s.a_ready_cycles, 400);
  EXPECT_DOUBLE_EQ(s.start_spread_ns, 100);
  const std::string text = format_stamps(s, 2000);
  EXPECT_NE(text.find("2 CTAs, 3 units (3 recorded), 16 K blocks"), std::string::npos) << text;
  EXPECT_NE(text.find("| 4 | 2 | 300 | 1000 | 525 | 220 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 8 | 1 | 300 | 1000 | - | 200 |"), std::string::npos) << text;
}

TEST(Sm90Stamps, UnitsPastTheRoomAreCountedNotRead) {
  std::vector<Unit> many;
  for (int u = 0; u < 5; ++u) many.push_back({u, 0, 2, 0, 1, true, 100, 2000, 0, 50});
  const StampSummary s = summarize_stamps(write({many}, 3), 1, 3);
  EXPECT_EQ(s.units, 5);
  EXPECT_EQ(s.units_recorded, 3);
  EXPECT_EQ(s.kblocks, 6);
}

TEST(Sm90Stamps, PerCtaRecordsAndTheLatestTenth) {
  // Ten CTAs of one unit each; CTA 9 runs 16 K blocks where the others run 8, so it ends last.
  std::vector<std::vector<Unit>> ctas;
  for (int c = 0; c < 10; ++c)
    ctas.push_back({{c, 0, c == 9 ? 16 : 8, 0, 1, true, 100, c == 9 ? 16000u : 8000u, 0, 50}});
  const StampSummary s = summarize_stamps(write(ctas, 2), 10, 2);
  ASSERT_EQ(s.cta.size(), 10u);
  EXPECT_EQ(s.cta[9].kblocks, 16);
  EXPECT_EQ(s.cta[9].loop, 16000);
  EXPECT_EQ(s.cta[9].sm, 9);
  EXPECT_EQ(s.cta[3].a_ready, 400);
  EXPECT_DOUBLE_EQ(s.cta[0].start_ns, 0);    // relative to the first CTA's start
  EXPECT_DOUBLE_EQ(s.cta[3].start_ns, 300);
  EXPECT_DOUBLE_EQ(s.cta[0].end_ns, 4082);  // (8165 cycles) / 2, in whole ns
  const std::string text = format_stamps(s, 2000);
  EXPECT_NE(text.find("the latest tenth of CTAs end 8.98 us, 16 K blocks at 1000 cycles each, start 0.90 us"),
            std::string::npos) << text;
  EXPECT_NE(text.find("the rest end 4.48 us, 8 K blocks at 1000 cycles each"), std::string::npos) << text;
  const std::string csv = format_stamps_per_cta(s);
  EXPECT_EQ(csv.rfind("cta,sm,units,kblocks,start_ns,end_ns,a_ready_cycles,busy_cycles,loop_cycles\n", 0), 0u);
  EXPECT_NE(csv.find("\n9,9,1,16,900,8982,400,16165,16000\n"), std::string::npos) << csv;
}

TEST(Sm90Stamps, RecordsNoKernelWritesAreRefused) {
  const std::vector<std::vector<Unit>> one = {{{0, 0, 8, 0, 1, true, 300, 8000, 0, 200},
                                               {1, 0, 8, 0, 1, true, 300, 8000, 0, 200}}};
  const auto refused = [](std::vector<uint64_t> w, const std::string& needle) {
    try {
      summarize_stamps(w, 1, 4);
      ADD_FAILURE() << "accepted; expected: " << needle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<uint64_t> w = write(one, 4);
  w[L::kHeader + L::kUnit + L::kLoopClk] = w[L::kHeader + L::kUnit + L::kFirstClk] - 1;  // a clock backwards
  refused(w, "CTA 0 unit 1: stamp 2 before stamp 1");
  w = write(one, 4);
  w[L::kHeader + L::kUnit + L::kBeginClk] = w[L::kHeader + L::kEndClk_] - 1;  // overlaps the unit before
  refused(w, "CTA 0 unit 1: starts before the previous unit ended");
  w = write(one, 4);
  w[L::kHeader + L::kBlocks] = 8;  // kb0 = 8, kb1 = 0
  refused(w, "CTA 0 unit 0: K blocks [8, 0)");
  w = write(one, 4);
  w[L::kHeader + L::kSplit] = uint64_t(2) | (uint64_t(2) << 32);  // split 2 of 2
  refused(w, "CTA 0 unit 0: split 2 of 2");
  w = write(one, 4);
  w[L::kEndClk] = w[L::kEntryClk] - 1;
  refused(w, "CTA 0: ends before it starts");
  w = write(one, 4);
  w.pop_back();
  refused(w, "words, expected");
  // a launch without stamps leaves the buffer as it was (zeros): nothing recorded
  refused(std::vector<uint64_t>(L::words(1, 4), 0), "no unit recorded");
}

// The streaming kernel's time line (StreamStampLayout): three CTAs, each a start and five phases.
using SL = StreamStampLayout;
std::vector<uint64_t> write_stream(const std::vector<std::vector<uint64_t>>& ctas) {  // start, then 5 phase lengths
  std::vector<uint64_t> w(SL::words(int(ctas.size())), 0);
  const int word[6] = {SL::kStartNs, SL::kSlabNs, SL::kLoopNs, SL::kArriveNs, SL::kPassNs, SL::kEndNs};
  for (size_t c = 0; c < ctas.size(); ++c) {
    uint64_t t = 0;
    for (int b = 0; b < 6; ++b) w[SL::at(int(c)) + word[b]] = t += ctas[c][size_t(b)];
    w[SL::at(int(c)) + SL::kSm] = 2 * c;
    w[SL::at(int(c)) + SL::kUnits] = 50 + c;
  }
  return w;
}

TEST(Sm90Stamps, StreamPhasesAndBoundaries) {
  // CTA 2 starts 300 ns late; every CTA passes the barrier at 10000 (after the last arrives at 9900)
  const std::vector<uint64_t> w = write_stream({{1000000, 2000, 6000, 500, 1500, 3000},
                                                {1000100, 2500, 5000, 400, 2000, 2900},
                                                {1000300, 1500, 7500, 600, 100, 3100}});
  const StreamStampSummary s = summarize_stream_stamps(w, 3);
  EXPECT_EQ(s.ctas, 3);
  EXPECT_EQ(s.units, 153);
  EXPECT_EQ(s.fewest_units, 50);
  EXPECT_EQ(s.most_units, 52);
  EXPECT_DOUBLE_EQ(s.phase_median_ns[0], 2000);  // slab: 2000, 2500, 1500
  EXPECT_DOUBLE_EQ(s.phase_max_ns[0], 2500);
  EXPECT_DOUBLE_EQ(s.phase_median_ns[1], 6000);  // loop
  EXPECT_DOUBLE_EQ(s.phase_max_ns[1], 7500);
  EXPECT_DOUBLE_EQ(s.phase_max_ns[3], 2000);     // barrier wait
  EXPECT_DOUBLE_EQ(s.first_ns[0], 0);
  EXPECT_DOUBLE_EQ(s.last_ns[0], 300);           // the start spread
  EXPECT_DOUBLE_EQ(s.last_ns[3], 9900);          // the last arrival: CTA 2, 300 + 1500 + 7500 + 600
  EXPECT_DOUBLE_EQ(s.first_ns[4], 10000);
  EXPECT_DOUBLE_EQ(s.span_ns, 13100);            // CTA 2 ends at 10000 + 3100
  const std::string text = format_stream_stamps(s);
  EXPECT_NE(text.find("span      13.10 us"), std::string::npos) << text;
  EXPECT_NE(text.find("grid barrier wait"), std::string::npos) << text;
  // per CTA: its SM and units, its stamps after the first start (CTA 2: 300, 1800, 9300, 9900, 10000, 13100)
  ASSERT_EQ(s.cta.size(), 3u);
  const std::string csv = format_stream_stamps_per_cta(s);
  EXPECT_EQ(csv.rfind("cta,sm,units,start_ns,slab_ns,loop_ns,arrive_ns,pass_ns,end_ns\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n2,4,52,300,1800,9300,9900,10000,13100\n"), std::string::npos) << csv;
}

TEST(Sm90Stamps, StreamRecordsNoKernelWritesAreRefused) {
  const std::vector<std::vector<uint64_t>> good = {{1000000, 2000, 6000, 500, 1500, 3000},
                                                   {1000100, 2500, 5000, 400, 1000, 2900}};
  const auto refused = [](const std::vector<uint64_t>& w, int ctas, const std::string& needle) {
    try {
      summarize_stream_stamps(w, ctas);
      ADD_FAILURE() << "accepted; expected: " << needle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<uint64_t> w = write_stream(good);
  EXPECT_NO_THROW(summarize_stream_stamps(w, 2));
  w[SL::at(1) + SL::kLoopNs] = w[SL::at(1) + SL::kSlabNs] - 1;
  refused(w, 2, "CTA 1: stamp 2 before stamp 1");
  w = write_stream(good);
  w[SL::at(0) + SL::kEndNs] = 0;
  refused(w, 2, "CTA 0: stamp 5 missing");
  w = write_stream({{1000000, 2000, 6000, 500, 100, 3000}, {1000100, 2500, 6500, 400, 1000, 2900}});
  refused(w, 2, "passed the grid barrier before the last arrived");  // CTA 0 passes at 8600, CTA 1 arrives at 9500
  refused(std::vector<uint64_t>(SL::words(2), 0), 2, "CTA 0: stamp 0 missing");  // a launch without stamps
  w = write_stream(good);
  w.pop_back();
  refused(w, 2, "words, expected");
}

}  // namespace
}  // namespace nvfp4::sm90
