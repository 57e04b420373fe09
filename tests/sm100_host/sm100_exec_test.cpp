// The sm100 kernel's own device code executed on the host models of the Blackwell hardware
// (kernels/sm100/host_model): every GPU MODE test and benchmark shape (sampled tiles), tails,
// M = 1, L > 1, several work units per CTA, uneven split-K, and bit-identical results across
// completion orders. Each run must be free of hazards and match the exact CPU reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/sm100_host/host_exec.hpp"

using namespace nvfp4;
using sm100_host::Outcome;
using sm100_host::Spec;

namespace {

struct Case {
  const char* name;
  Shape shape;
  std::vector<int64_t> tiles;  // empty: all
  int sm_count = 148;
  int grid = 0;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Tiles sampled so each case runs in well under a second: the first and the last tile where
// that is cheap (tails), one CTA's worth where tiles are many.
const Case kCases[] = {
    {"test1_128x256x256", {128, 256, 256, 1}, {}},
    {"test2_128x1536x7168", {128, 1536, 7168, 1}, {11}},
    {"test3_128x3072x1536", {128, 3072, 1536, 1}, {0, 23}},
    {"test4_256x7168x256", {256, 7168, 256, 1}, {0, 111}},
    {"test5_256x7168x2048", {256, 7168, 2048, 1}, {0, 111}},
    {"test6_2304x4608x7168", {2304, 4608, 7168, 1}, {647}},
    {"test7_384x7168x2304", {384, 7168, 2304, 1}, {167}},
    {"test8_512x512x7168", {512, 512, 7168, 1}, {15}},
    {"test9_512x4096x512", {512, 4096, 512, 1}, {0, 127}},
    {"test10_512x1536x7168", {512, 1536, 7168, 1}, {47}},
    {"bench1_128x7168x16384", {128, 7168, 16384, 1}, {55}},
    {"bench2_128x4096x7168", {128, 4096, 7168, 1}, {31}},
    {"bench3_128x7168x2048", {128, 7168, 2048, 1}, {0}},
    {"tails_200x96x512_L3", {200, 96, 512, 3}, {}},
    {"m1_1x160x1024", {1, 160, 1024, 1}, {}},
    // Grids smaller than the unit count: 2-3 units per CTA through both accumulators, with
    // split-K over 7 K tiles in 3 uneven parts (2, 2, 3), and without split-K.
    {"units_per_cta_split_128x256x1792_L2", {128, 256, 1792, 2}, {}, 12, 5},
    {"units_per_cta_384x512x512", {384, 512, 512, 1}, {}, 4, 0},
};

class Sm100HostExec : public ::testing::TestWithParam<Case> {};

TEST_P(Sm100HostExec, MatchesExactReferenceWithoutHazards) {
  const Case& c = GetParam();
  Spec spec;
  spec.shape = c.shape;
  spec.tiles = c.tiles;
  spec.sm_count = c.sm_count;
  spec.grid = c.grid;
  spec.model.seed = 7;
  const Outcome out = sm100_host::run(spec);
  EXPECT_TRUE(out.passed()) << out.summary();
  EXPECT_GT(out.verify.checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Sm100HostExec, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The same problem under different delays, completion orders, CTA orders and shared-memory
// offsets gives the same bits (the split-K reduction sums in split order).
TEST(Sm100HostExec, BitIdenticalAcrossCompletionOrders) {
  Spec spec;
  spec.shape = {128, 256, 1792, 2};
  spec.sm_count = 12;
  spec.grid = 5;
  std::vector<uint16_t> first;
  for (uint64_t seed : {1u, 2u, 3u}) {
    spec.model.seed = seed;
    spec.model.delay_percent = seed == 2 ? 100 : 30;
    spec.model.cta_parallel = static_cast<int>(seed);
    const Outcome out = sm100_host::run(spec);
    ASSERT_TRUE(out.passed()) << "seed " << seed << ": " << out.summary();
    if (first.empty())
      first = out.c;
    else
      EXPECT_EQ(out.c, first) << "seed " << seed << " differs";
  }
}

// The model's own rules hold on a kernel-free check: a misaligned global base is refused as
// the driver would refuse it.
TEST(Sm100HostModel, TensorMapRulesOfTheDriver) {
  alignas(16) static uint8_t buf[4096];
  const auto p = sm100::make_operand_map_params(16, 256, 1, 16);
  EXPECT_NO_THROW(sm100::host_model::encode_tensor_map(p, buf));
  EXPECT_THROW(sm100::host_model::encode_tensor_map(p, buf + 8), std::invalid_argument);
  auto bad = p;
  bad.box[0] = 256;  // 256 bytes > the 128-byte swizzle span
  EXPECT_THROW(sm100::host_model::encode_tensor_map(bad, buf), std::invalid_argument);
}

}  // namespace
