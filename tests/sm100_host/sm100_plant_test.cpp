// The host execution can fail: each planted bug (model.hpp, Plant) - a wrong descriptor field,
// a wrong barrier parity, a missing wait, a wrong scale column, swapped operands, ... - makes
// the run fail, and in the way expected (a hazard named, a hang reported by the kernel's own
// watchdog at the right wait site, or wrong values against the exact reference).
#include <gtest/gtest.h>

#include <string>

#include "tests/sm100_host/host_exec.hpp"

using namespace nvfp4;
using sm100::host_model::Plant;
using sm100_host::Outcome;
using sm100_host::Spec;

namespace {

// WrongValues: mismatches against the exact reference; Finding: a finding containing `text`;
// AnyHazard: some finding (which one depends on how the threads interleave); Watchdog: the
// kernel's watchdog trapped, naming wait site `text`.
enum class Shows { WrongValues, Finding, AnyHazard, Watchdog };

struct Expect {
  Plant plant;
  Shows shows;
  const char* text;  // in a finding, or the watchdog's wait site
  int min_tma_us = 0, min_mma_us = 0;  // slow units make a missing wait visible
  int64_t k = 2048;                    // 512: units shorter than the ring
};

const Expect kExpect[] = {
    {Plant::OperandSbo, Shows::WrongValues, ""},
    {Plant::OperandSwizzle, Shows::WrongValues, ""},
    {Plant::InstrN, Shows::WrongValues, ""},
    {Plant::InstrM, Shows::Finding, "M != 128"},
    {Plant::SwapOperands, Shows::WrongValues, ""},
    {Plant::ScaleColumn, Shows::WrongValues, ""},
    {Plant::ScaleCopySbo, Shows::WrongValues, ""},
    {Plant::SkipScaleCopy, Shows::WrongValues, ""},
    {Plant::FullParity, Shows::AnyHazard, "", 300, 0},
    {Plant::ExpectTxShort, Shows::Watchdog, "wait site 3"},
    {Plant::ExpectTxLong, Shows::Watchdog, "wait site 3"},
    {Plant::SkipAccFullCommit, Shows::Watchdog, "wait site 4"},
    {Plant::TmaRowCoord, Shows::WrongValues, ""},
    {Plant::LaneQuarter, Shows::Finding, "may access only lanes"},
    // Which hazard a missing wait shows first depends on how the threads interleave (a race
    // seen, or a hang after the waits fall out of step): some finding must be made.
    {Plant::SkipWaitEmpty, Shows::AnyHazard, "", 0, 300},
    // Units of 2 K tiles: the MMAs of unit 3 (accumulator 0 again) are issued while the
    // epilogue still reads unit 1's.
    {Plant::SkipWaitAccEmpty, Shows::AnyHazard, "", 0, 300, 512},
    {Plant::SkipWaitFull, Shows::AnyHazard, "", 300, 0},
    {Plant::SkipWaitAccFull, Shows::AnyHazard, "", 0, 300},
    {Plant::SkipWaitLoadTail, Shows::Finding, "CTA exits before waiting"},
};

// One CTA, three work units of 8 (or 2) K tiles: the 6-stage ring wraps and both accumulators
// are reused.
Spec plant_spec(const Expect& e) {
  Spec spec;
  spec.shape = {128, 384, e.k, 1};
  spec.sm_count = 1;
  spec.model.seed = 5;
  spec.model.plant = e.plant;
  spec.model.min_tma_delay_us = e.min_tma_us;
  spec.model.min_mma_delay_us = e.min_mma_us;
  return spec;
}

bool has_finding(const Outcome& o, const std::string& text) {
  for (const auto& f : o.model.findings)
    if (f.find(text) != std::string::npos) return true;
  return false;
}

bool printed(const Outcome& o, const std::string& text) {
  for (const auto& line : o.model.output)
    if (line.find("watchdog") != std::string::npos && line.find(text) != std::string::npos)
      return true;
  return false;
}

class Sm100Plant : public ::testing::TestWithParam<Expect> {};

TEST_P(Sm100Plant, IsCaught) {
  const Expect& e = GetParam();
  const Outcome out = sm100_host::run(plant_spec(e));
  EXPECT_FALSE(out.passed()) << "planted " << plant_name(e.plant) << " went unnoticed";
  switch (e.shows) {
    case Shows::WrongValues:
      EXPECT_GT(out.verify.mismatches, 0) << out.summary();
      break;
    case Shows::Finding:
      EXPECT_TRUE(has_finding(out, e.text)) << "expected '" << e.text << "': " << out.summary();
      break;
    case Shows::AnyHazard:
      EXPECT_GT(out.model.finding_count, 0) << out.summary();
      break;
    case Shows::Watchdog:
      EXPECT_TRUE(out.model.trapped) << out.summary();
      EXPECT_TRUE(printed(out, e.text)) << "expected '" << e.text << "': " << out.summary();
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Bugs, Sm100Plant, ::testing::ValuesIn(kExpect), [](const auto& info) {
  std::string n = plant_name(info.param.plant);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

// Every plant the model knows has an expectation above, and the same set-up without a plant
// is clean, also with the slow units the missing-wait plants use.
TEST(Sm100Plant, EveryPlantIsTestedAndTheControlPasses) {
  for (Plant p : sm100::host_model::all_plants()) {
    bool found = false;
    for (const auto& e : kExpect) found |= e.plant == p;
    EXPECT_TRUE(found) << plant_name(p) << " has no test";
  }
  for (const Expect& slow : {Expect{Plant::None, Shows::Finding, "", 300, 0},
                             Expect{Plant::None, Shows::Finding, "", 0, 300},
                             Expect{Plant::None, Shows::Finding, "", 0, 300, 512}}) {
    const Outcome out = sm100_host::run(plant_spec(slow));
    EXPECT_TRUE(out.passed()) << out.summary();
  }
}

}  // namespace
