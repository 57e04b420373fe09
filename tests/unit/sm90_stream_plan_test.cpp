// The streaming path's host side (kernels/sm90/stream_plan.hpp, config.cpp, heuristics.cpp): the
// work split covers every (B row panel, K block) of every batch exactly once; the piece protocol
// the kernel runs on it (a warp's pieces stored alone or summed in shared memory per CTA, one slot
// per CTA of a panel-slice, the final sums reading exactly the slots written, every panel summed
// by one CTA) is consistent and fits the workspace and shared memory the layout sizes; its
// configurations are spelt, listed, chosen and refused by the rules. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/heuristics.hpp"
#include "kernels/sm90/stream_plan.hpp"
#include "src/core/arith.hpp"

using namespace nvfp4;
using namespace nvfp4::sm90;

namespace {

StreamConfig cfg(int m_tile, int ctas) { return StreamConfig{m_tile, ctas, stream_warps(m_tile)}; }

// What one call of the kernel does with its units, replayed on the host with the plan's
// functions (stream_kernel.cuh's control flow): per warp its pieces, alone or stashed; per CTA
// the stashed runs summed; per piece a slot written, holding that many groups of its panel.
struct Replay {
  std::map<std::pair<int64_t, int>, int> writes;  // (panel-slice, slot) -> times written
  std::map<int64_t, int64_t> groups;              // panel -> groups its pieces hold
  std::vector<int> covered;                       // per unit, how many warps computed it
  std::string error;
};

Replay replay(const Shape& s, const StreamConfig& c) {
  const StreamLayout w = stream_layout(s, c);
  const StreamPlan p = stream_plan(s, c);
  Replay r;
  r.covered.assign(size_t(p.units), 0);
  const int gs = p.slice_groups;
  auto send = [&](int64_t ps, int slot, int64_t g) {
    if (slot < 0 || slot >= p.slots) r.error = "slot " + std::to_string(slot) + " outside [0, slots)";
    ++r.writes[{ps, slot}];
    r.groups[stream_panel_of(p, ps)] += g;
  };
  for (int64_t cta = 0; cta < p.ctas; ++cta) {
    const int64_t cta0 = stream_cta_start(p, cta), cta1 = stream_cta_start(p, cta + 1);
    std::vector<std::pair<int64_t, int64_t>> stash;  // (tag, -) in warp, slot order; tag -1 empty
    for (int warp = 0; warp < p.warps; ++warp) {
      const int64_t gw = cta * p.warps + warp;
      const int64_t u0 = stream_warp_start(p, gw), u1 = stream_warp_start(p, gw + 1);
      if (u0 < cta0 || u1 > cta1) r.error = "a warp's units outside its CTA's";
      int64_t slots[2] = {-1, -1};
      const bool start_alone = u0 % gs == 0 || u0 == cta0, end_alone = u1 % gs == 0 || u1 == cta1;
      bool first = true;
      int64_t seg = 0;
      for (int64_t u = u0; u < u1; ++u) {
        ++r.covered[size_t(u)];
        ++seg;
        const int64_t ps = u / gs;
        if ((u + 1) % gs == 0 || u + 1 == u1) {
          if ((!first || start_alone) && (u + 1 < u1 || end_alone)) {
            const StreamSpan part = stream_cta_part(p, ps, cta);
            if (part.hi - part.lo != seg) r.error = "an alone piece is not all of its CTA's part";
            send(ps, static_cast<int>(cta - stream_owner(ps * gs, p.units, p.ctas)), seg);
          } else {
            slots[first ? 0 : 1] = ps;
          }
          first = false;
          seg = 0;
        }
      }
      stash.push_back({slots[0], 0});
      stash.push_back({slots[1], 0});
    }
    for (size_t e = 0; e < stash.size(); ++e) {
      const int64_t tag = stash[e].first;
      if (tag < 0) continue;
      int64_t prev = int64_t(e) - 1;
      while (prev >= 0 && stash[size_t(prev)].first < 0) --prev;
      if (prev >= 0 && stash[size_t(prev)].first == tag) continue;
      const StreamSpan part = stream_cta_part(p, tag, cta);
      send(tag, static_cast<int>(cta - stream_owner(tag * gs, p.units, p.ctas)), part.hi - part.lo);
    }
  }
  (void)w;
  return r;
}

// False where the configuration is refused for its shared memory (few CTAs holding many slices
// of A), the one reason a K multiple of 256 and M within the tile can have.
bool refused(const Shape& s, const StreamConfig& c) {
  const std::string e = stream_shape_error(s, c);
  if (e.empty()) return false;
  EXPECT_NE(e.find("bytes of shared memory a CTA here"), std::string::npos) << e;
  EXPECT_GT(stream_layout(s, c).smem, kStreamSmemLimit);
  return true;
}

void check(const Shape& s, const StreamConfig& c) {
  SCOPED_TRACE(describe(Config{Path::Stream, {}, {}, c}) + " at " + std::to_string(s.m) + "x" + std::to_string(s.n) +
               "x" + std::to_string(s.k) + " L=" + std::to_string(s.l));
  const StreamLayout w = stream_layout(s, c);
  const StreamPlan p = stream_plan(s, c);
  const int groups = static_cast<int>(s.k / kStreamGroupK);
  ASSERT_EQ(groups % p.slice_groups, 0);
  ASSERT_EQ(p.units, s.l * ceil_div(s.n, int64_t(16)) * groups);
  ASSERT_LE(w.smem, kStreamSmemLimit);
  const Replay r = replay(s, c);
  ASSERT_EQ(r.error, "");
  // every unit once, so every (batch, 16-row panel, group of 4 K blocks) once: the unit order is
  // (batch, slice, panel, group in slice) and that is a bijection onto those
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int64_t u = 0; u < p.units; ++u) {
    ASSERT_EQ(r.covered[size_t(u)], 1) << "unit " << u;
    const int64_t z = u / p.per_z, rest = u % p.per_z;
    const int64_t batch = z / p.slices, slice = z % p.slices, panel = rest / p.slice_groups, gl = rest % p.slice_groups;
    ASSERT_LT(batch, s.l);
    ASSERT_TRUE(seen.insert({batch, panel, slice * p.slice_groups + gl}).second);
  }
  ASSERT_EQ(int64_t(seen.size()), s.l * ceil_div(s.n, int64_t(16)) * groups);
  // each written slot once; each panel's pieces hold its K / 256 groups; the final sums' shares
  // (CTA b: panels [b P / C, (b + 1) P / C)) hold every panel once
  for (const auto& [key, times] : r.writes) ASSERT_EQ(times, 1) << "panel-slice " << key.first << " slot " << key.second;
  const int64_t panels = s.l * ceil_div(s.n, int64_t(16));
  ASSERT_EQ(int64_t(r.groups.size()), panels);
  for (const auto& [panel, g] : r.groups) ASSERT_EQ(g, groups) << "panel " << panel;
  ASSERT_EQ(w.panels, panels);
  for (int64_t b = 0; b < p.ctas; ++b)
    ASSERT_EQ(stream_div((b + 1) * panels, p.ctas), stream_k_start(b + 1, panels, p.ctas));
  ASSERT_EQ(stream_div(int64_t(p.ctas) * panels, p.ctas), panels);
  // the final sums read (stream_kernel.cuh, finish_panel, through StreamPieceWalk) exactly the
  // slots written, in (slice, slot) order
  for (int64_t panel = 0; panel < panels; ++panel) {
    std::vector<int64_t> expect;
    for (int sl = 0; sl < p.slices; ++sl) {
      const int64_t ps = stream_panel_slice(p, panel, sl);
      ASSERT_EQ(stream_panel_of(p, ps), panel);
      const int64_t f = stream_owner(ps * p.slice_groups, p.units, p.ctas);
      const int64_t l = stream_owner(ps * p.slice_groups + p.slice_groups - 1, p.units, p.ctas);
      int read = 0;
      for (int64_t b = f; b <= l; ++b) {
        const StreamSpan part = stream_cta_part(p, ps, b);
        const bool written = r.writes.count({ps, static_cast<int>(b - f)}) > 0;
        ASSERT_EQ(part.hi > part.lo, written) << "panel-slice " << ps << " CTA " << b;
        if (stream_ctas_all_hold_units(p)) {
          ASSERT_TRUE(written) << "panel-slice " << ps << " CTA " << b;
        }
        if (written) expect.push_back(ps * p.slots + (b - f));
        read += written;
      }
      ASSERT_GE(read, 1);
    }
    StreamPieceWalk walk(p, panel);
    std::vector<int64_t> got;
    while (walk.next()) got.push_back(walk.piece());
    ASSERT_FALSE(walk.next());  // and stays past the last
    ASSERT_EQ(got, expect) << "panel " << panel;
  }
  ASSERT_EQ(int64_t(r.writes.size()) * int64_t(kStreamPanelRows) * c.m_tile * 4 <= int64_t(w.partial), true);
  // the walk's test for an empty CTA (32-bit, where some are empty) against the CTAs' ranges
  for (int64_t b = 0; b < p.ctas; ++b) {
    const bool holds = stream_cta_start(p, b + 1) > stream_cta_start(p, b);
    if (!stream_ctas_all_hold_units(p)) {
      ASSERT_EQ(stream_cta_holds_units(p, b), holds) << "CTA " << b;
    } else {
      ASSERT_TRUE(holds) << "CTA " << b;
    }
  }
  // the A slab holds every slice a CTA's units touch
  for (int64_t b = 0; b < p.ctas; ++b) {
    const int64_t lo = stream_cta_start(p, b), hi = stream_cta_start(p, b + 1);
    if (hi > lo) {
      EXPECT_LE((hi - 1) / p.per_z - lo / p.per_z + 1, w.slab_slices);
    }
  }
}

}  // namespace

// Units against warps: far more (long K, many panels), about as many, fewer (more CTAs than
// units, empty warps and CTAs between owners); ragged N; L > 1; K of one group; every M tile.
TEST(Sm90Stream, WorkSplitCoversEveryPanelAndBlockOnceAndPiecesAddUp) {
  const Shape shapes[] = {{16, 57344, 8192, 1}, {16, 7168, 16384, 1}, {16, 576, 7168, 1}, {5, 100, 256, 1},
                          {16, 24576, 1536, 1}, {3, 1000, 1280, 3},   {32, 8, 256, 2},    {8, 4096, 7168, 1},
                          {16, 32768, 512, 1},  {1, 40, 3328, 5}};
  int checked = 0;
  for (const Shape& s : shapes)
    for (int mt : {8, 16, 32}) {
      if (s.m > mt) continue;
      for (int ctas : {1, 3, 7, 132}) {
        if (refused(s, cfg(mt, ctas))) continue;
        check(s, cfg(mt, ctas));
        ++checked;
      }
      EXPECT_EQ(stream_shape_error(s, cfg(mt, 132)), "");  // one CTA an SM always fits these
    }
  EXPECT_GE(checked, 60);
}

TEST(Sm90Stream, DivisionsTakeTheShortPathOnlyWhereExact) {
  const int64_t big = int64_t(1) << 40;
  for (int64_t a : {int64_t(0), int64_t(1), int64_t(4294967295), int64_t(4294967296), big + 12345, int64_t(15138816)})
    for (int64_t b : {int64_t(1), int64_t(7), int64_t(132), int64_t(4294967295), int64_t(4294967296), big})
      ASSERT_EQ(stream_div(a, b), a / b) << a << " / " << b;
}

// The owner is a float estimate corrected by two compares (stream_plan.hpp): exact against the
// integer quotient, at the edges of every CTA's range and at sizes past 32 bits.
TEST(Sm90Stream, OwnerEstimateIsTheExactQuotient) {
  int64_t checked = 0;
  for (int64_t units : {int64_t(1), int64_t(3), int64_t(131), int64_t(132), int64_t(133), int64_t(114688),
                        int64_t(16777217), int64_t(16777219), int64_t(2147483647)})  // 2^24 + 1, + 3: estimates one high, one low
    for (int64_t ctas : {int64_t(1), int64_t(2), int64_t(63), int64_t(132), int64_t(1000)})
      for (int64_t b = 0; b <= ctas; ++b) {
        const int64_t start = b * units / ctas;  // stream_k_start's split
        for (int64_t pos : {start - 1, start, start + 1}) {
          if (pos < 0 || pos >= units) continue;
          ASSERT_EQ(stream_owner(pos, units, ctas), ((pos + 1) * ctas - 1) / units)
              << "unit " << pos << " of " << units << ", " << ctas << " CTAs";
          ++checked;
        }
      }
  EXPECT_GT(checked, 5000);
}

TEST(Sm90Stream, SlotsBoundTheCtasOfAPanelSlice) {
  for (int64_t units : {1, 5, 31, 132, 1000, 114688})
    for (int gs : {1, 2, 7, 8, 16})
      for (int ctas : {1, 2, 132, 500}) {
        const int slots = stream_slots(units, gs, ctas);
        for (int64_t ps = 0; ps * gs < units; ++ps) {
          const int64_t last = std::min(units - 1, ps * gs + gs - 1);
          ASSERT_LT(stream_owner(last, units, ctas) - stream_owner(ps * gs, units, ctas), slots)
              << units << " units, " << gs << " a slice, " << ctas << " CTAs, panel-slice " << ps;
        }
        for (int64_t pos = 0; pos < units; ++pos) {
          const int64_t b = stream_owner(pos, units, ctas);
          ASSERT_LE(stream_k_start(b, units, ctas), pos);
          ASSERT_GT(stream_k_start(b + 1, units, ctas), pos);
        }
      }
}

TEST(Sm90Stream, ConfigurationsAreSpeltParsedAndRefused) {
  Config c;
  ASSERT_EQ(parse_config("stream 16x16 ctas 132 warps 16", &c), "");
  EXPECT_EQ(c.path, Path::Stream);
  EXPECT_EQ(c.stream.m_tile, 16);
  EXPECT_EQ(c.stream.ctas, 132);
  EXPECT_EQ(c.stream.warps, 16);
  EXPECT_EQ(describe(c), "stream 16x16 ctas 132 warps 16");
  EXPECT_NE(parse_config("stream 16x128 ctas 132 warps 16", &c).find("the stream path's tile is MTx16"), std::string::npos);
  EXPECT_NE(parse_config("stream 16x16 ctas 0 warps 16", &c).find("ctas '0' is not a positive count"), std::string::npos);
  EXPECT_NE(parse_config("stream 16x16 ctas 132", &c).find("'stream MTx16 ctas C warps W'"), std::string::npos);

  const Shape m16{16, 7168, 16384, 1};
  EXPECT_EQ(stream_shape_error(m16, cfg(16, 132)), "");
  EXPECT_NE(stream_shape_error(Shape{16, 7168, 320, 1}, cfg(16, 132)).find("needs K a multiple of 256 (its unit's K), got 320"),
            std::string::npos);
  EXPECT_NE(stream_shape_error(Shape{17, 7168, 512, 1}, cfg(16, 132)).find("M tile 16 holds M <= 16, got M = 17"),
            std::string::npos);
  EXPECT_NE(stream_shape_error(m16, StreamConfig{16, 132, 12}).find("stream warps 12 is not built with M tile 16 (16)"),
            std::string::npos);
  EXPECT_NE(stream_shape_error(m16, cfg(64, 132)).find("stream M tile 64 is not built (8, 16, 32)"), std::string::npos);
  EXPECT_NE(stream_shape_error(m16, cfg(16, 65536)).find("stream ctas 65536 is over 65535"), std::string::npos);
  EXPECT_EQ(stream_shape_error(Shape{16, 64, 256, 1}, cfg(16, 65535)), "");
  // the smallest K it takes, and the next K it refuses
  EXPECT_EQ(stream_shape_error(Shape{16, 64, 256, 1}, cfg(16, 132)), "");
  EXPECT_NE(stream_shape_error(Shape{16, 64, 64, 1}, cfg(16, 132)), "");

  // through the kernel's rules: listed for the auto kernel at M <= 32, refused with the reason
  ASSERT_EQ(parse_config("stream 16x16 ctas 132 warps 16", &c), "");
  EXPECT_EQ(configuration_error(m16, Path::Auto, c, 132), "");
  EXPECT_NE(configuration_error(m16, Path::Auto, c, 114).find("the stream path runs stream 16x16 ctas 114 warps 16 here"),
            std::string::npos);
  EXPECT_EQ(describe(choose_config(Shape{1, 8, 256, 1}, 132, Path::Stream)), "stream 8x16 ctas 1 warps 16");
  EXPECT_NE(configuration_error(m16, Path::Fused, c, 132).find("fused path only"), std::string::npos);
  EXPECT_NE(configuration_error(Shape{16, 7168, 320, 1}, Path::Auto, c, 132).find("needs K a multiple of 256"),
            std::string::npos);
  const std::vector<Config> listed = configurations(Shape{24, 7168, 2048, 1}, Path::Auto, 132);
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(describe(listed.back()), "stream 32x16 ctas 132 warps 12");
  for (const Config& x : configurations(Shape{33, 7168, 2048, 1}, Path::Auto, 132)) EXPECT_NE(x.path, Path::Stream);
}

// Auto takes the streaming path where stream_chosen holds (M <= 8 and 2.5-16 units a warp at
// 132 SMs: 7168 x 16384 has 13.6), else what it took before (the fused or two-phase path by
// their models); forced, it picks its tile and CTAs.
TEST(Sm90Stream, ChosenAtSmallMWhereItRuns) {
  for (int64_t m = 1; m <= 40; ++m)
    for (const Shape s : {Shape{m, 7168, 16384, 1}, Shape{m, 576, 7168, 1}, Shape{m, 57344, 8192, 1}}) {
      const Config c = choose_config(s, 132);
      EXPECT_EQ(c.path == Path::Stream, m <= 8 && s.n == 7168) << m;
      EXPECT_EQ(c.path == Path::Stream, stream_chosen(s, 132)) << m;
      if (m <= 16) {
        const Config f = choose_config(s, 132, Path::Stream);
        ASSERT_EQ(f.path, Path::Stream) << m;
        EXPECT_EQ(f.stream.m_tile, m <= 8 ? 8 : 16);
        // one CTA an SM, or one per 16 units (warps) where fewer: 576 / 16 x 7168 / 256 = 1008 units
        EXPECT_EQ(f.stream.ctas, s.n == 576 ? 63 : 132);
      }
      EXPECT_EQ(choose_config(s, 132, Path::Fused).path, Path::Fused);
    }
  // K not a multiple of 256: the fused path as before
  EXPECT_EQ(choose_config(Shape{16, 7168, 320, 1}, 132).path, Path::Fused);
}

// The band reproduces the device runs it was set from (H100, 132 SMs, cold, the streaming path
// against the fused path's pick in one call; docs/kernels.md, the streaming path, "When it is
// taken"): taken on every shape measured faster, on none measured slower. The held-out shapes
// were measured after the band was set from the first list.
TEST(Sm90Stream, ChosenWhereMeasuredFaster) {
  const Shape faster[] = {// the shipped N x K at M = 4 and 8
                          {8, 24576, 1536, 1}, {8, 7168, 16384, 1}, {8, 7168, 18432, 1}, {8, 4096, 7168, 1},
                          {8, 10240, 8192, 1}, {8, 8192, 8192, 1}, {4, 4096, 7168, 1}, {4, 24576, 1536, 1},
                          {1, 7168, 16384, 1}, {1, 4096, 7168, 1},
                          // held out
                          {8, 4096, 16384, 1}, {8, 5120, 8192, 1}, {8, 2048, 16384, 1}, {1, 14336, 4096, 1},
                          {8, 3072, 8192, 1}, {8, 28672, 4096, 1}, {8, 12288, 4096, 1}, {6, 6144, 6144, 1},
                          {8, 16384, 2048, 1}, {2, 11008, 4096, 1}, {3, 2560, 10240, 1}, {7, 13824, 5120, 1},
                          {8, 18432, 7168, 1}, {5, 3584, 7168, 1}};
  const Shape slower[] = {{8, 1536, 7168, 1},  {8, 576, 7168, 1},   {8, 32768, 512, 1},   {8, 7168, 2048, 1},
                          {8, 57344, 8192, 1}, {8, 8192, 28672, 1}, {4, 1536, 7168, 1},   {4, 7168, 2048, 1},
                          {4, 57344, 8192, 1}, {4, 8192, 28672, 1}, {4, 36864, 7168, 1}, {8, 4096, 4096, 1},
                          // M > 8: slower on most shapes
                          {12, 4096, 7168, 1}, {16, 8192, 8192, 1}, {16, 4096, 7168, 1}, {32, 7168, 16384, 1}};
  for (const Shape& s : faster) EXPECT_TRUE(stream_chosen(s, 132)) << s.m << "x" << s.n << "x" << s.k;
  for (const Shape& s : slower) EXPECT_FALSE(stream_chosen(s, 132)) << s.m << "x" << s.n << "x" << s.k;
  // measured at L = 1 only; K not a multiple of 256 never
  EXPECT_FALSE(stream_chosen(Shape{8, 7168, 16384, 2}, 132));
  EXPECT_FALSE(stream_chosen(Shape{8, 7168, 16128 + 64, 1}, 132));
}
