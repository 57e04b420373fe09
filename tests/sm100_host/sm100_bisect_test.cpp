// The sm100 bisect (kernels/sm100/bisect.hpp) run on the host models: with each hardware
// behaviour deliberately changed (host_model::Semantics) it must name that behaviour and no
// other, and say how it differs; on the model as documented it must name none. The probes run
// through the kernel's own device code, as bench/sm100_bisect.cpp runs them on a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/sm100/bisect.hpp"
#include "tests/sm100_host/host_exec.hpp"

using namespace nvfp4;
using sm100::bisect::Behaviour;
namespace hm = sm100::host_model;

namespace {

struct Case {
  const char* name;
  hm::Semantics semantics;
  bool differs;         // false: the documented model, nothing may be named
  Behaviour behaviour;  // the one that must be named
  const char* how;      // text the finding must contain
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

hm::Semantics with(hm::KStep k) {
  hm::Semantics s;
  s.k_step = k;
  return s;
}
hm::Semantics with(hm::ScaleCopy c) {
  hm::Semantics s;
  s.scale_copy = c;
  return s;
}
hm::Semantics with(hm::ScalePlacement p) {
  hm::Semantics s;
  s.scale_placement = p;
  return s;
}
hm::Semantics with(hm::LoadMapping l) {
  hm::Semantics s;
  s.load = l;
  return s;
}

const Case kCases[] = {
    {"documented", {}, false, Behaviour::KStep, ""},
    // Row r's 16-byte chunk h of MMA j at ((h ^ r % 8) + 2j) ^ r % 8: for r % 8 = 2, MMA 1 reads
    // chunks 6 and 7 (K blocks 12-15); r % 8 = 1 happens to read right.
    {"k_step_swizzle_before_step", with(hm::KStep::SwizzleBeforeStep), true, Behaviour::KStep,
     "A rows with row % 8 = 2: MMA 1 read K blocks 12-15 where it should read K blocks 4-7"},
    {"k_step_ignored", with(hm::KStep::StepIgnored), true, Behaviour::KStep,
     "MMA 1 read K blocks 0-3 where it should read K blocks 4-7"},
    {"scale_copy_no_multicast", with(hm::ScaleCopy::NoMulticast), true, Behaviour::ScaleCopy,
     "SFA lanes 32-63 hold no atom row: the copy did not reach lane quarter 1"},
    {"scale_copy_rows_interleaved", with(hm::ScaleCopy::RowsInterleaved), true,
     Behaviour::ScaleCopy, "lane 1 holds row 8 where row 1 was expected"},
    {"scale_placement_column_byte_swapped", with(hm::ScalePlacement::ColumnByteSwapped), true,
     Behaviour::ScalePlacement, "column and byte exchanged"},
    {"scale_placement_bytes_reversed", with(hm::ScalePlacement::BytesReversed), true,
     Behaviour::ScalePlacement, "row 0, K block 0 took the scale of rows 0-31, K block 3"},
    {"epilogue_load_transposed", with(hm::LoadMapping::Transposed), true, Behaviour::Epilogue,
     "each 32x32 block is transposed"},
};

// Every probe through the kernel on the host models with `semantics`; C as the kernel wrote it.
std::vector<std::vector<uint16_t>> run_probes(const hm::Semantics& semantics) {
  std::vector<std::vector<uint16_t>> outputs;
  for (const auto& probe : sm100::bisect::probes()) {
    sm100_host::Spec spec;
    spec.shape = sm100::bisect::kShape;
    spec.operands = &probe.tensors;
    spec.model.seed = 3;
    spec.model.semantics = semantics;
    const sm100_host::Outcome out = sm100_host::run(spec);
    // The changed semantics alter values only: the model's rules still hold.
    EXPECT_TRUE(out.model.clean()) << probe.name << ": " << out.summary();
    EXPECT_EQ(out.stray_writes, 0) << probe.name;
    // On the documented model each probe's C is the exact product of its operands.
    if (semantics.documented()) {
      EXPECT_TRUE(out.verify.passed()) << probe.name << ": " << out.summary();
    }
    outputs.push_back(out.c);
  }
  return outputs;
}

class Sm100Bisect : public ::testing::TestWithParam<Case> {};

TEST_P(Sm100Bisect, NamesTheChangedBehaviourAlone) {
  const Case& c = GetParam();
  const auto report = sm100::bisect::decode(run_probes(c.semantics));
  const std::string text = report.text();
  if (!c.differs) {
    EXPECT_TRUE(report.differs.empty()) << text;
    EXPECT_NE(text.find("verdict: no behaviour differs"), std::string::npos) << text;
    return;
  }
  ASSERT_EQ(report.differs.size(), 1u) << text;
  EXPECT_EQ(report.differs[0].behaviour, c.behaviour) << text;
  EXPECT_NE(report.differs[0].how.find(c.how), std::string::npos)
      << "expected '" << c.how << "' in:\n" << text;
  EXPECT_NE(text.find(std::string("verdict: differs: ") + sm100::bisect::behaviour_name(c.behaviour)),
            std::string::npos)
      << text;
}

INSTANTIATE_TEST_SUITE_P(Semantics, Sm100Bisect, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Every behaviour has a changed semantics above, so each can be named.
TEST(Sm100BisectCases, EveryBehaviourIsChangedOnce) {
  for (Behaviour b : {Behaviour::KStep, Behaviour::ScaleCopy, Behaviour::ScalePlacement,
                      Behaviour::Epilogue}) {
    bool found = false;
    for (const Case& c : kCases) found |= c.differs && c.behaviour == b;
    EXPECT_TRUE(found) << sm100::bisect::behaviour_name(b);
  }
}

// The decoder refuses outputs that are not one per probe of the bisect's shape.
TEST(Sm100BisectCases, DecodeRefusesWrongOutputs) {
  const size_t n = sm100::bisect::probes().size();
  std::vector<std::vector<uint16_t>> outputs(n - 1, std::vector<uint16_t>(128 * 128, 0));
  EXPECT_THROW(sm100::bisect::decode(outputs), std::invalid_argument);
  outputs.emplace_back(7, 0);
  EXPECT_THROW(sm100::bisect::decode(outputs), std::invalid_argument);
}

}  // namespace
