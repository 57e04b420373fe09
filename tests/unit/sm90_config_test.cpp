// The sm90 kernel's configurations by name (--kernel-config, --list-configs, the sweep key
// kernel_config): every configuration its chooser can pick is listed and round-trips through
// set_configuration; bad spellings and configurations a shape does not allow are refused with
// the reason; and the chooser still picks what it picked before kernels/sm90 was reorganised.
// No GPU needed (132 SMs assumed without one).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/sm90/fit.hpp"
#include "kernels/sm90/heuristics.hpp"
#include "kernels/sm90/launch_graphs.hpp"
#include "kernels/sm90/stream_k.hpp"
#include "kernels/sm90/walk.hpp"
#include "src/registry/registry.hpp"

using namespace nvfp4;

namespace {

const char* const kSm90Kernels[] = {"sm90", "sm90-fused", "sm90-2phase"};

std::vector<int64_t> axis_values(const nlohmann::json& v) {
  if (v.is_number_integer()) return {v.get<int64_t>()};
  std::vector<int64_t> out;
  if (v.is_array()) {
    for (const auto& x : v) out.push_back(x.get<int64_t>());
  } else {  // {"from", "to", "step"}
    for (int64_t x = v.at("from").get<int64_t>(); x <= v.at("to").get<int64_t>(); x += v.value("step", 1))
      out.push_back(x);
  }
  return out;
}

// Every shape of every shipped sweep config (configs/*.json), read from the JSON itself so that
// configs using keys this test does not know still count.
std::vector<Shape> shipped_shapes() {
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen;
  for (const auto& e : std::filesystem::directory_iterator(NVFP4_SOURCE_DIR "/configs")) {
    const std::string p = e.path().string();
    if (e.path().extension() != ".json" || p.find(".schema.") != std::string::npos) continue;
    std::ifstream in(p);
    const nlohmann::json cfg = nlohmann::json::parse(in);
    for (const auto& c : cfg.at("cases")) {
      const nlohmann::json& dims = c.contains("shape") ? c.at("shape") : c.at("axes");
      const nlohmann::json one = 1;
      for (int64_t m : axis_values(dims.at("m")))
        for (int64_t n : axis_values(dims.at("n")))
          for (int64_t k : axis_values(dims.at("k")))
            for (int64_t l : axis_values(dims.contains("l") ? dims.at("l") : one)) seen.insert({m, n, k, l});
    }
  }
  std::vector<Shape> out;
  for (const auto& [m, n, k, l] : seen) out.push_back(Shape{m, n, k, l});
  return out;
}

std::string name_of(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " L=" + std::to_string(s.l);
}

}  // namespace

// tests/fixtures/sm90-choices.txt holds, for 1147 shapes (the shipped configs', the fit data's,
// the GPU tests' and a grid of M, N, K) at 132 SMs and a sample at 114, what the chooser picks,
// per path: those of before the reorganisation but where stream-K is now taken (its header). The
// heuristics must pick the same.
TEST(Sm90Config, ChoicesAreUnchanged) {
  std::ifstream in(NVFP4_SOURCE_DIR "/tests/fixtures/sm90-choices.txt");
  ASSERT_TRUE(in.good());
  int lines = 0;
  int no = 0;
  for (std::string line; std::getline(in, line);) {
    Shape s;
    int sms = 0;
    std::string recorded;
    if (!sm90::parse_choice_line(line, ++no, &s, &sms, &recorded)) continue;
    ASSERT_EQ(sm90::choices_of(s, sms), recorded) << name_of(s) << " at " << sms << " SMs";
    ++lines;
  }
  EXPECT_GE(lines, 1600);
}

// Every configuration the chooser picks for every shipped shape is listed, and every listed one
// round-trips: set_configuration accepts it, configuration() then names it, parse and describe
// agree, and "" gives the choice back to the kernel.
TEST(Sm90Config, EveryListedConfigurationRoundTrips) {
  const std::vector<Shape> shapes = shipped_shapes();
  ASSERT_GE(shapes.size(), 80u);
  int supported = 0;
  for (const char* name : kSm90Kernels) {
    auto g = make_gemm(name, Role::Kernel);
    ASSERT_TRUE(g) << name;
    for (const Shape& s : shapes) {
      const std::vector<std::string> list = g->configurations(s);
      if (!g->shape_error(s).empty()) {
        EXPECT_TRUE(list.empty()) << name << " " << name_of(s);
        EXPECT_NE(g->set_configuration("fused 128x128 split 1", s), "") << name << " " << name_of(s);
        continue;
      }
      ++supported;
      const std::string chosen = g->configuration(s);
      EXPECT_NE(std::find(list.begin(), list.end(), chosen), list.end())
          << name << " " << name_of(s) << ": the choice " << chosen << " is not listed";
      EXPECT_EQ(std::set<std::string>(list.begin(), list.end()).size(), list.size()) << name << " " << name_of(s);
      for (const std::string& c : list) {
        ASSERT_EQ(g->set_configuration(c, s), "") << name << " " << name_of(s) << ": " << c;
        ASSERT_EQ(g->configuration(s), c) << name << " " << name_of(s);
        sm90::Config parsed;
        ASSERT_EQ(sm90::parse_config(c, &parsed), "") << c;
        EXPECT_EQ(sm90::describe(parsed), c);
        EXPECT_EQ(g->workspace_bytes(s), sm90::workspace_bytes(s, parsed)) << c;
        if (std::string(name) == "sm90-fused") {
          EXPECT_EQ(parsed.path, sm90::Path::Fused) << c;
        }
        if (std::string(name) == "sm90-2phase") {
          EXPECT_EQ(parsed.path, sm90::Path::TwoPhase) << c;
        }
      }
      ASSERT_EQ(g->set_configuration("", s), "");
      EXPECT_EQ(g->configuration(s), chosen) << name << " " << name_of(s);
    }
  }
  EXPECT_GE(supported, 3 * 80);  // three kernels x the shipped shapes (all with K % 64 == 0)
}

// A pinned configuration holds for its shape only; other shapes keep the kernel's own choice.
TEST(Sm90Config, PinHoldsForItsShape) {
  auto g = make_gemm("sm90", Role::Kernel);
  const Shape a{128, 7168, 16384, 1}, b{4096, 576, 7168, 1};
  ASSERT_EQ(g->configuration(a), "fused 128x128 stream-k 132");
  ASSERT_EQ(g->set_configuration("fused 64x128 split 4", a), "");
  EXPECT_EQ(g->configuration(a), "fused 64x128 split 4");
  EXPECT_EQ(g->configuration(b), "two-phase 128x144 split 1 group 16");
  // A refused configuration leaves the pin as it was.
  EXPECT_NE(g->set_configuration("fused 64x128 split 7", a), "");
  EXPECT_EQ(g->configuration(a), "fused 64x128 split 4");
  // Both paths are listed for the auto kernel, fused first.
  const auto list = g->configurations(a);
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list.front().rfind("fused ", 0), 0u);
  EXPECT_EQ(list.back().rfind("two-phase ", 0), 0u);
}

// Refusals: the reason names what is wrong and what would be accepted.
TEST(Sm90Config, BadConfigurationsAreRefusedWithTheReason) {
  const Shape small{128, 7168, 16384, 1}, big{4096, 576, 7168, 1};
  const struct {
    const char* kernel;
    Shape shape;
    const char* config;
    const char* reason;  // a substring of the reason
  } cases[] = {
      {"sm90", small, "fused 128x128", "expected 'fused MTx128 split S', 'fused MTx128 stream-k W' (either optionally followed by 'per-sm 2') or 'two-phase BMxBN split S group G'"},
      {"sm90", small, "fused", "expected 'fused MTx128 split S'"},
      {"sm90", small, "fast", "expected 'fused MTx128 split S'"},
      {"sm90", small, "Fused 128x128 split 2", "expected 'fused MTx128 split S'"},
      {"sm90", small, "fused 128x128 split 2 ", "not spelt as the kernel spells it"},
      {"sm90", small, "fused  128x128 split 2", "not spelt as the kernel spells it"},
      {"sm90", small, "fused 128x64 split 1", "the fused path's tile is MTx128, got 128x64"},
      {"sm90", small, "fused 128*128 split 1", "tile '128*128' is not ROWSxCOLS"},
      {"sm90", small, "fused 128x128 split 02", "split '02' is not a positive count"},
      {"sm90", small, "fused 128x128 split 0", "split '0' is not a positive count"},
      {"sm90", small, "fused 128x128 split -1", "split '-1' is not a positive count"},
      {"sm90", small, "fused 48x128 split 1", "fused M tile 48 is not built (16, 32, 64, 128, 256)"},
      {"sm90", small, "fused 16x128 split 1", "does not weigh M tile 16 at 128x7168x16384 (M tiles there: 128, 64)"},
      {"sm90", small, "fused 128x128 split 7", "does not weigh split 7 at 128x7168x16384 with M tile 128 (splits there: 1, 2, 3, 4, 5, 6, 8, 12, 16)"},
      {"sm90", Shape{128, 7168, 256, 1}, "fused 128x128 split 8", "splits there: 1, 2, 4)"},
      {"sm90", big, "two-phase 128x144 split 1", "expected 'fused MTx128 split S', 'fused MTx128 stream-k W' (either optionally followed by 'per-sm 2') or 'two-phase BMxBN split S group G'"},
      {"sm90", big, "two-phase 128x150 split 1 group 16", "two-phase tile 128x150 is not built"},
      {"sm90", big, "two-phase 256x256 split 1 group 16", "two-phase tile 256x256 is not built"},
      {"sm90", big, "two-phase 128x144 split 1 group 8", "uses group 16 at 4096x576x7168 with tile 128x144, not 8"},
      {"sm90", big, "two-phase 128x144 split 5 group 16", "does not weigh split 5 at 4096x576x7168 (splits there: 1, 2, 3, 4, 6, 8"},
      {"sm90", big, "two-phase 128x144 split 0 group 16", "split '0' is not a positive count"},
      {"sm90", big, "two-phase 128x144 split 1 group x", "group 'x' is not a positive count"},
      {"sm90-fused", big, "two-phase 128x144 split 1 group 16", "this kernel runs the fused path only"},
      {"sm90-2phase", small, "fused 128x128 split 2", "this kernel runs the two-phase path only"},
      {"sm90", Shape{128, 256, 96, 1}, "fused 128x128 split 1", "the shape is not supported: K must be a multiple of 64"},
      {"sm90", small, "fused 128x128 split 2 per-sm 2", "per-sm 2 with M tile 128: two CTAs per SM with M tile 16 only"},
      {"sm90", small, "fused 16x128 split 2 per-sm 3", "per-sm '3' is not 2"},
      {"sm90", small, "fused 16x128 split 2 per-sm 1", "per-sm '1' is not 2 (one CTA per SM is spelt without 'per-sm')"},
      {"sm90", small, "fused 16x128 split 2 per-sm", "expected 'fused MTx128 split S', 'fused MTx128 stream-k W' (either optionally followed by 'per-sm 2')"},
      {"sm90", Shape{16, 576, 7168, 1}, "fused 16x128 split 4 per-sm 2", "weighs split 4 per-sm 2 at 16x576x7168 only where its units (5 per split) take more than one round of 132 SMs"},
      {"sm90", Shape{16, 576, 7168, 1}, "fused 16x128 split 7 per-sm 2", "does not weigh split 7 at 16x576x7168 with M tile 16"},
      {"sm90", Shape{16, 57344, 8192, 1}, "fused 16x128 stream-k 132 per-sm 2", "stream-k per-sm 2 uses 264 workers here (twice the SM count)"},
      {"sm90", Shape{16, 57344, 8192, 1}, "fused 16x128 stream-k 264", "stream-k uses 132 workers here (the SM count), not 264"},
  };
  for (const auto& c : cases) {
    auto g = make_gemm(c.kernel, Role::Kernel);
    const std::string before = g->configuration(c.shape);
    const std::string why = g->set_configuration(c.config, c.shape);
    EXPECT_NE(why.find(c.reason), std::string::npos)
        << c.kernel << " '" << c.config << "': got \"" << why << "\", want \"" << c.reason << "\"";
    EXPECT_EQ(g->configuration(c.shape), before) << c.kernel << " '" << c.config << "'";
  }
  // The same rules through the heuristics directly (what the Gemm object calls).
  sm90::Config parsed;
  EXPECT_EQ(sm90::parse_config("two-phase 128x144 split 1 group 16", &parsed), "");
  EXPECT_EQ(sm90::configuration_error(big, sm90::Path::Auto, parsed, 132), "");
  EXPECT_NE(sm90::configuration_error(small, sm90::Path::Auto, parsed, 132), "");  // group 8 at M = 128
}

// The fused kernel's B-stage scales (config.hpp, fused_scale_box_start): for a unit starting at
// any K block kb0, every stage kb = kb0 + 4t takes a TMA box starting 16-byte aligned (TMA
// refuses other starts: an earlier form read from byte 4 * kb and stopped with an illegal
// instruction on an H200 wherever kb % 4 != 0), and the consumers' byte for block kb + j, at the
// unit's fixed offset, is that block's scale byte and lies inside the box row.
TEST(Sm90Config, FusedScaleBoxesStartAlignedAndHoldEveryBlock) {
  int checked = 0;
  for (int kb0 = 0; kb0 < 64; ++kb0)
    for (int len = 1; len <= 40; ++len)
      for (int kb = kb0; kb < kb0 + len; kb += sm90::kFusedBStageKb) {
        const int start = sm90::fused_scale_box_start(kb);
        ASSERT_EQ(start % 16, 0) << "stage at K block " << kb;
        for (int j = 0; j < sm90::kFusedBStageKb && kb + j < kb0 + len; ++j) {
          const int at = sm90::fused_scale_in_box(kb0) + 4 * j;  // what the consumers read
          ASSERT_LE(at + 4, sm90::kFusedScaleRow) << "unit at " << kb0 << ", stage " << kb << ", block " << j;
          ASSERT_EQ(start + at, 4 * (kb + j)) << "unit at " << kb0 << ", stage " << kb << ", block " << j;
          ++checked;
        }
      }
  EXPECT_GT(checked, 10000);
}

// Stream-K's walk (kernels/sm90/stream_k.hpp, what every role of the fused kernel walks): every
// quad of every tile belongs to exactly one piece; a tile's pieces are numbered 0..nseg-1 in K
// order, each by a different worker, all agreeing on nseg; no tile has more pieces than the
// workspace's slots; every worker does floor or ceil of W/G quads. Checked on tile counts around
// the worker count, long and short K, and more workers than tiles.
TEST(Sm90Config, StreamKCoversEveryQuadOnce) {
  int checked = 0;
  for (int64_t tiles : {1, 7, 56, 131, 132, 133, 264, 448})
    for (int nq : {1, 3, 4, 16, 64, 257})
      for (int64_t workers : {1, 5, 100, 132, 264}) {
        const int64_t w = tiles * nq;
        if (w < workers) continue;
        const int slots = sm90::stream_k_slots(tiles, nq, workers);
        std::vector<int> owner(size_t(w), -1);
        std::vector<std::vector<int>> seg_of(static_cast<size_t>(tiles));  // per tile: seg index -> worker
        std::vector<int> nseg(size_t(tiles), 0);
        for (int64_t g = 0; g < workers; ++g) {
          int64_t pos = sm90::stream_k_start(g, w, workers);
          const int64_t end = sm90::stream_k_start(g + 1, w, workers);
          ASSERT_TRUE(end - pos == w / workers || end - pos == w / workers + 1) << g;
          while (pos < end) {
            const sm90::StreamKSegment s = sm90::stream_k_segment(pos, end, int(g), w, workers, nq);
            ASSERT_LT(s.q0, s.q1);
            ASSERT_LE(s.q1, nq);
            ASSERT_EQ(s.tile * nq + s.q0, pos);
            for (int q = s.q0; q < s.q1; ++q) {
              ASSERT_EQ(owner[size_t(s.tile * nq + q)], -1) << "quad covered twice";
              owner[size_t(s.tile * nq + q)] = int(g);
            }
            auto& v = seg_of[size_t(s.tile)];
            if (v.size() <= size_t(s.seg)) v.resize(size_t(s.seg) + 1, -1);
            ASSERT_EQ(v[size_t(s.seg)], -1) << "piece index used twice";
            v[size_t(s.seg)] = int(g);
            if (nseg[size_t(s.tile)] == 0) nseg[size_t(s.tile)] = s.nseg;
            ASSERT_EQ(nseg[size_t(s.tile)], s.nseg);
            pos += s.q1 - s.q0;
          }
        }
        for (int64_t t = 0; t < tiles; ++t) {
          const auto& v = seg_of[size_t(t)];
          ASSERT_EQ(int(v.size()), nseg[size_t(t)]);
          for (size_t i = 0; i < v.size(); ++i) {
            ASSERT_GE(v[i], 0) << "tile " << t << " piece " << i << " missing";
            if (i > 0) {
              ASSERT_EQ(v[i], v[i - 1] + 1) << "pieces in K order, one worker each";
            }
          }
          if (nseg[size_t(t)] > 1) {
            ASSERT_LE(nseg[size_t(t)], slots) << tiles << " tiles, nq " << nq;
          }
        }
        ASSERT_EQ(std::count(owner.begin(), owner.end(), -1), 0);
        ++checked;
      }
  EXPECT_GT(checked, 150);
}

// Stream-K's ranges are equal shares: a spelling with more words after 'stream-k W' than
// 'per-sm 2' is refused, and the forms the refusal lists name no development program.
TEST(Sm90Config, StreamKIsSpeltWithoutWeights) {
  sm90::Config c;
  const std::string e = sm90::parse_config("fused 128x128 stream-k 132 fix 4", &c);
  EXPECT_NE(e.find("expected 'fused MTx128 split S'"), std::string::npos) << e;
  EXPECT_EQ(e.find("bench"), std::string::npos) << e;
  ASSERT_EQ(sm90::parse_config("fused 16x128 stream-k 264 per-sm 2", &c), "");
  EXPECT_EQ(c.fused.workers, 264);
  EXPECT_EQ(c.fused.per_sm, 2);
}

// Stream-K is listed where the tiles leave SMs idle (128x7168x16384: 56 tiles on 132 SMs) and
// not where they fill whole rounds or K has fewer quads than SMs; it is spelt with its workers,
// accepted with the SM count only, and picked by the chooser only at M <= 512 (where its model
// was checked: sm90_host_test, StreamKChoiceIsNearTheFasterOfThePair).
TEST(Sm90Config, StreamKIsListedPinnableAndChosenAtSmallMOnly) {
  const Shape gm{128, 7168, 16384, 1};
  bool listed = false;
  for (const sm90::Config& c : sm90::configurations(gm, sm90::Path::Fused, 132))
    listed = listed || sm90::describe(c) == "fused 128x128 stream-k 132";
  EXPECT_TRUE(listed);
  for (const sm90::Config& c : sm90::configurations(Shape{128, 128 * 132, 4096, 1}, sm90::Path::Fused, 132))
    EXPECT_EQ(c.fused.workers, 0) << sm90::describe(c);  // 132 tiles of 128x128: whole rounds
  for (const sm90::Config& c : sm90::configurations(Shape{128, 256, 256, 1}, sm90::Path::Fused, 132))
    EXPECT_EQ(c.fused.workers, 0) << sm90::describe(c);  // 2 tiles x 1 quad < 132 workers
  sm90::Config c;
  ASSERT_EQ(sm90::parse_config("fused 128x128 stream-k 132", &c), "");
  EXPECT_EQ(c.path, sm90::Path::Fused);
  EXPECT_EQ(c.fused.workers, 132);
  EXPECT_EQ(sm90::configuration_error(gm, sm90::Path::Fused, c, 132), "");
  EXPECT_NE(sm90::configuration_error(gm, sm90::Path::Fused, c, 114).find("uses 114 workers here"),
            std::string::npos);
  EXPECT_NE(sm90::parse_config("fused 128x128 stream-k 0", &c).find("stream-k workers '0'"), std::string::npos);
  EXPECT_EQ(sm90::choose_config(gm, 132).fused.workers, 132);
  const Shape large{1024, 7168, 16384, 1};  // listed, not chosen
  bool listed_large = false;
  for (const sm90::Config& x : sm90::configurations(large, sm90::Path::Fused, 132))
    listed_large = listed_large || x.fused.workers > 0;
  EXPECT_TRUE(listed_large);
  EXPECT_EQ(sm90::choose_config(large, 132, sm90::Path::Fused).fused.workers, 0);
  // Its workspace holds stream_k_slots partials per tile: 56 tiles x 4 slots x 128 x 128 FP32.
  const sm90::FusedLayout w = sm90::fused_layout(gm, sm90::FusedConfig{128, 1, 132});
  EXPECT_EQ(w.slots, 4);
  EXPECT_EQ(w.partial, size_t(56) * 4 * 128 * 128 * 4);
}

// Two CTAs per SM (`per-sm 2`): weighed at M tile 16 only, split-K where its units take more than
// one round of one CTA per SM, stream-K over twice the SM count; spelt with its suffix, which
// round-trips; chosen where the model says it wins (16x57344x8192, measured 1.12x; not at
// 16x576x7168, whose 5 tiles leave SMs idle either way).
TEST(Sm90Config, TwoPerSmIsWeighedAtMTile16Only) {
  int seen = 0;
  for (const Shape& s : {Shape{16, 57344, 8192, 1}, Shape{32, 24576, 1536, 1}, Shape{64, 57344, 8192, 1},
                         Shape{16, 576, 7168, 1}, Shape{1, 8, 64, 1}}) {
    for (const sm90::Config& c : sm90::configurations(s, sm90::Path::Fused, 132)) {
      if (c.fused.per_sm == 1) continue;
      ++seen;
      EXPECT_EQ(c.fused.per_sm, 2) << sm90::describe(c);
      EXPECT_EQ(c.fused.m_tile, 16) << sm90::describe(c);
      if (c.fused.workers > 0) {
        EXPECT_EQ(c.fused.workers, 264) << sm90::describe(c);
      } else {
        EXPECT_GT(int64_t(sm90::fused_layout(s, c.fused).tiles) * c.fused.split, 132) << sm90::describe(c);
      }
      sm90::Config parsed;
      ASSERT_EQ(sm90::parse_config(sm90::describe(c), &parsed), "") << sm90::describe(c);
      EXPECT_EQ(parsed.fused.per_sm, 2);
      EXPECT_EQ(sm90::describe(parsed), sm90::describe(c));
    }
  }
  EXPECT_GT(seen, 10);
  // the fused path's own choice (the auto kernel takes the streaming path at M <= 16)
  EXPECT_EQ(sm90::describe(sm90::choose_config(Shape{16, 57344, 8192, 1}, 132, sm90::Path::Fused)),
            "fused 16x128 stream-k 264 per-sm 2");
  EXPECT_EQ(sm90::choose_config(Shape{16, 576, 7168, 1}, 132, sm90::Path::Fused).fused.per_sm, 1);
  EXPECT_EQ(sm90::choose_config(Shape{64, 57344, 8192, 1}, 132).fused.per_sm, 1);
}

// Which calls the launchers replay as graphs (kernels/sm90/launch_graphs.hpp): a call's second
// sighting builds one, later ones find it; any part of the key differing is another call; no
// graph past the capacity, and no call built twice.
TEST(Sm90Config, LaunchGraphsBuildOnTheSecondCallWithinCapacity) {
  sm90::LaunchGraphs<int> g(2);
  const Shape s{128, 7168, 16384, 1};
  sm90::Config c;
  int bufs[8];
  const auto key = [&](const Shape& sh, const sm90::Config& cf, int out) {
    return sm90::LaunchKey::of(sh, cf, &bufs[0], &bufs[1], &bufs[2], &bufs[3], &bufs[out], &bufs[7]);
  };
  const sm90::LaunchKey k = key(s, c, 4);
  EXPECT_EQ(g.find(k), nullptr);
  EXPECT_FALSE(g.should_build(k));  // first call: launched directly
  EXPECT_TRUE(g.should_build(k));   // second: build
  g.add(k, 7);
  ASSERT_NE(g.find(k), nullptr);
  EXPECT_EQ(*g.find(k), 7);
  sm90::Config other = c;
  other.fused.split = 2;
  for (const sm90::LaunchKey& d : {key(Shape{128, 7168, 16384, 2}, c, 4), key(s, other, 4), key(s, c, 5)}) {
    EXPECT_EQ(g.find(d), nullptr);
    EXPECT_FALSE(g.should_build(d));
  }
  EXPECT_TRUE(g.should_build(key(s, other, 4)));
  g.add(key(s, other, 4), 8);
  EXPECT_EQ(g.size(), 2u);
  EXPECT_FALSE(g.should_build(key(s, c, 5)));  // seen before, but no room: launched directly
  EXPECT_NE(g.find(k), nullptr);               // what was built stays
}

// A call whose capture the runtime refused launches directly from then on: never retried, and
// other calls are not affected.
TEST(Sm90Config, LaunchGraphsNeverRetryARefusedCall) {
  sm90::LaunchGraphs<int> g(4);
  int bufs[8];
  const Shape s{128, 7168, 2048, 1};
  const sm90::LaunchKey a = sm90::LaunchKey::of(s, sm90::Config{}, &bufs[0], &bufs[1], &bufs[2], &bufs[3], &bufs[4], &bufs[7]);
  const sm90::LaunchKey b = sm90::LaunchKey::of(s, sm90::Config{}, &bufs[0], &bufs[1], &bufs[2], &bufs[3], &bufs[5], &bufs[7]);
  EXPECT_FALSE(g.should_build(a));
  EXPECT_TRUE(g.should_build(a));  // the capture is tried here, and refused
  g.refuse(a);
  EXPECT_EQ(g.refused(), 1u);
  for (int call = 0; call < 5; ++call) EXPECT_FALSE(g.should_build(a)) << call;
  EXPECT_EQ(g.find(a), nullptr);
  EXPECT_FALSE(g.should_build(b));
  EXPECT_TRUE(g.should_build(b));
  g.add(b, 1);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_FALSE(g.should_build(a));
}

namespace {

// Walks every CTA of the fused kernel's grid on the host with the kernel's own walk (walk.hpp's
// UnitWalk over config.cpp's fused_walk, what fused.cu launches) and checks what the kernel
// relies on: every K block of every output tile computed exactly once; a tile's `order` (its
// counter and partials index) one per tile, below the tile count; its pieces numbered 0..S-1,
// each once, in K order, all agreeing on S, and S within the workspace's partial slots wherever
// S > 1; stream-K pieces starting on a B-ring stage. Returns the first broken rule, or "".
std::string walk_error(const Shape& s, const sm90::FusedConfig& c, int sms) {
  const sm90::FusedWalk p = sm90::fused_walk(s, c, sms);
  const sm90::FusedLayout lay = sm90::fused_layout(s, c);
  const int64_t tiles = s.l * int64_t(p.tiles_m) * p.tiles_n;
  if (tiles != lay.tiles) return "tile count differs from the layout's";
  std::vector<int> covered(size_t(tiles) * size_t(p.nk), 0);
  std::vector<int64_t> order_tile(size_t(tiles), -1);
  struct Piece {
    int kb0, split, splits;
  };
  std::vector<std::vector<Piece>> pieces{size_t(tiles)};
  for (int cta = 0; cta < p.grid; ++cta) {
    sm90::UnitWalk walk(p, unsigned(cta));
    for (sm90::WorkUnit x; walk.next(p, x, unsigned(cta), unsigned(p.grid));) {
      if (x.batch < 0 || x.batch >= s.l || x.tm < 0 || x.tm >= p.tiles_m || x.tn < 0 || x.tn >= p.tiles_n)
        return fmt::format("CTA {}: tile ({}, {}, {}) outside the grid of tiles", cta, x.batch, x.tm, x.tn);
      if (x.kb0 < 0 || x.kb0 >= x.kb1 || x.kb1 > p.nk)
        return fmt::format("CTA {}: K blocks [{}, {}) of {}", cta, x.kb0, x.kb1, p.nk);
      if (p.workers > 0 && x.kb0 % sm90::kFusedBStageKb != 0)
        return fmt::format("CTA {}: stream-K piece starts at K block {}, inside a B stage", cta, x.kb0);
      const int64_t t = (int64_t(x.batch) * p.tiles_m + x.tm) * p.tiles_n + x.tn;
      if (x.order < 0 || x.order >= tiles) return fmt::format("CTA {}: order {} of {} tiles", cta, x.order, tiles);
      if (order_tile[size_t(x.order)] == -1) order_tile[size_t(x.order)] = t;
      if (order_tile[size_t(x.order)] != t) return fmt::format("order {} names two tiles", x.order);
      if (x.split < 0 || x.split >= x.splits) return fmt::format("CTA {}: piece {} of {}", cta, x.split, x.splits);
      if (x.splits > 1 && x.splits > lay.slots)
        return fmt::format("a tile in {} pieces, the workspace holds {} a tile", x.splits, lay.slots);
      for (int kb = x.kb0; kb < x.kb1; ++kb) ++covered[size_t(t) * size_t(p.nk) + size_t(kb)];
      pieces[size_t(t)].push_back({x.kb0, x.split, x.splits});
    }
  }
  for (int64_t t = 0; t < tiles; ++t) {
    for (int kb = 0; kb < p.nk; ++kb)
      if (const int n = covered[size_t(t) * size_t(p.nk) + size_t(kb)]; n != 1)
        return fmt::format("tile {} K block {} computed {} times", t, kb, n);
    auto& v = pieces[size_t(t)];
    std::sort(v.begin(), v.end(), [](const Piece& a, const Piece& b) { return a.kb0 < b.kb0; });
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].split != int(i) || v[i].splits != int(v.size()))
        return fmt::format("tile {}: piece {} in K order is numbered {} of {} ({} pieces)", t, i, v[i].split,
                           v[i].splits, v.size());
  }
  for (int64_t o = 0; o < tiles; ++o)
    if (order_tile[size_t(o)] == -1) return fmt::format("no tile has order {}", o);
  return {};
}

}  // namespace

// Every fused configuration the chooser weighs (so every one --kernel-config accepts) on every
// shipped shape and a few ragged and batched ones, at three SM counts: walk_error above.
TEST(Sm90Config, FusedWalkComputesEveryTileOnce) {
  std::vector<Shape> shapes = shipped_shapes();
  for (const Shape& s : {Shape{1, 1, 64, 1}, Shape{33, 200, 64 * 37, 3}, Shape{300, 1000, 64 * 9, 2},
                         Shape{16, 130, 64 * 1021, 1}, Shape{1000, 129, 64 * 3, 5}})
    shapes.push_back(s);
  int walked = 0, stream_k = 0, split_k = 0;
  for (const Shape& s : shapes)
    for (int sms : {132, 114, 20})
      for (const sm90::FusedConfig& f : sm90::fused_candidates(s, sms)) {
        sm90::Config c;
        c.path = sm90::Path::Fused;
        c.fused = f;
        c = sm90::normalize(s, c);
        const std::string e = walk_error(s, c.fused, sms);
        ASSERT_EQ(e, "") << name_of(s) << " " << sm90::describe(c) << " on " << sms << " SMs";
        ++walked;
        ++(c.fused.workers > 0 ? stream_k : split_k);
      }
  EXPECT_GT(walked, 1000);
  EXPECT_GT(stream_k, 100);
  EXPECT_GT(split_k, 500);
}

// The persistent schedule alone (walk.hpp's work_unit, which the two-phase path's mainloop walks
// with its own tiles and group): units 0..U-1 name every (batch, tile) exactly once per split,
// each split's K range non-empty and the splits of a tile tiling [0, nk) in order.
TEST(Sm90Config, WorkUnitsNameEveryTileAndKBlockOnce) {
  int checked = 0;
  for (int l : {1, 3})
    for (int tiles_m : {1, 5, 8, 9, 17})
      for (int tiles_n : {1, 2, 7})
        for (int group : {1, 4, 8})
          for (int nk : {1, 3, 16, 37})
            for (int splits : {1, 2, 3, 16}) {
              if (splits > nk) continue;
              const int tiles = l * tiles_m * tiles_n;
              std::vector<int> next_kb(size_t(tiles), 0), seen(size_t(tiles), 0);
              for (int u = 0; u < tiles * splits; ++u) {
                const sm90::WorkUnit x = sm90::work_unit(u, tiles_m, tiles_n, splits, group, nk);
                ASSERT_TRUE(x.batch >= 0 && x.batch < l && x.tm >= 0 && x.tm < tiles_m && x.tn >= 0 && x.tn < tiles_n)
                    << "unit " << u;
                ASSERT_EQ(x.order, u / splits);
                const int t = (x.batch * tiles_m + x.tm) * tiles_n + x.tn;
                ASSERT_EQ(x.split, seen[size_t(t)]) << "unit " << u << ": splits of a tile adjacent, in order";
                ASSERT_EQ(x.splits, splits);
                ASSERT_EQ(x.kb0, next_kb[size_t(t)]) << "unit " << u;
                ASSERT_LT(x.kb0, x.kb1) << "unit " << u;
                next_kb[size_t(t)] = x.kb1;
                ++seen[size_t(t)];
              }
              for (int t = 0; t < tiles; ++t) {
                ASSERT_EQ(seen[size_t(t)], splits) << "tile " << t;
                ASSERT_EQ(next_kb[size_t(t)], nk) << "tile " << t;
              }
              ++checked;
            }
  EXPECT_GT(checked, 1000);
}
