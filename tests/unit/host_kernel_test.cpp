// The `host` kernel (kernels/host): each instruction-set variant this CPU runs gives the same
// bits, on shapes that exercise every edge of its blocking (ragged register tiles, K blocks
// and row tasks, L > 1), and all of them pass against the exact reference; its configurations
// are those variants. CPU only.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/host/host_sgemm.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "src/problem/problem.hpp"
#include "src/registry/registry.hpp"
#include "src/verify/verify.hpp"

using namespace nvfp4;

namespace {

std::vector<uint16_t> run_isa(const Shape& s, const HostTensors& t, host::Isa isa) {
  std::vector<uint16_t> c(size_t(s.l * s.m * s.n), kPoisonFp16);
  Operands ops = const_cast<HostTensors&>(t).view();
  ops.c = c.data();
  host::gemm(s, ops, isa);
  return c;
}

}  // namespace

TEST(HostKernel, EveryInstructionSetGivesTheSameBitsAndPasses) {
  // 1x1: one element; 37x29: ragged tiles; K = 1040 and 2064: a partial last K block (kKBlock
  // is 1024); M = 300: a second, partial row task (256 rows each); N = 70: a partial column task.
  static_assert(host::kKBlock == 1024, "the shapes below straddle 1024-element K blocks");
  const Shape shapes[] = {{1, 1, 16, 1}, {37, 29, 512, 2}, {5, 70, 1040, 1}, {300, 33, 2064, 1}};
  const std::vector<host::Isa> isas = host::isas_here();
  ASSERT_EQ(isas.back(), host::Isa::Generic);
  for (const Shape& s : shapes)
    for (Dist d : {Dist::GpuMode, Dist::Normal}) {
      HostTensors t;
      t.allocate(s);
      generate_host({s, d, 5}, t);
      Operands rops = t.view();
      exact_gemm(s, rops);
      const std::vector<uint16_t> first = run_isa(s, t, isas.front());
      const VerifyResult v = verify_full(s, first.data(), t.c.data(), {});
      EXPECT_TRUE(v.passed()) << s.m << "x" << s.n << "x" << s.k << ": " << v.mismatches
                              << " mismatches";
      EXPECT_EQ(v.unwritten, 0);
      // The generators' operands sum exactly even in FP32; random codes with scales over the
      // whole E4M3 range make FP32 round, so that a variant summing in another order differs.
      std::mt19937 rng(uint32_t(s.m * 7 + s.n));
      for (auto* q : {&t.a, &t.b})
        for (uint8_t& x : *q) x = uint8_t(rng());
      for (auto* q : {&t.sfa, &t.sfb})
        for (uint8_t& x : *q) x = uint8_t(1 + rng() % 0x7E);
      const std::vector<uint16_t> rounded = run_isa(s, t, isas.front());
      if (s.k >= 512) {  // FP32 did round here (else the comparison below could not fail)
        Operands exact = t.view();
        exact_gemm(s, exact);
        EXPECT_NE(std::memcmp(rounded.data(), t.c.data(), rounded.size() * 2), 0);
      }
      for (size_t i = 1; i < isas.size(); ++i) {
        const std::vector<uint16_t> other = run_isa(s, t, isas[i]);
        EXPECT_EQ(std::memcmp(other.data(), rounded.data(), other.size() * 2), 0)
            << host::isa_name(isas[i]) << " differs from " << host::isa_name(isas.front())
            << " at " << s.m << "x" << s.n << "x" << s.k << " L=" << s.l;
      }
    }
}

TEST(HostKernel, AccumulatesInFp32UnlikeTheExactReference) {
  // One output, K = 48: the products of the three blocks' first elements (same lane) are 2^16,
  // 2^-18 and -2^16. In FP32, 2^16 + 2^-18 rounds to 2^16 and the sum is 0; the exact reference
  // keeps 2^-18 (an fp16 subnormal). So the kernel is not the reference under another name.
  const Shape s{1, 1, 48, 1};
  HostTensors t;
  t.allocate(s);
  std::fill(t.a.begin(), t.a.end(), uint8_t(0));
  std::fill(t.b.begin(), t.b.end(), uint8_t(0));
  t.a[0] = 0x2, t.b[0] = 0x2;    // k = 0: 1.0 * 1.0 (E2M1 code 2, the low nibble)
  t.a[8] = 0x2, t.b[8] = 0x2;    // k = 16
  t.a[16] = 0xA, t.b[16] = 0x2;  // k = 32: -1.0 * 1.0
  t.sfa = {0x78, 0x01, 0x78};    // E4M3 scales 2^8, 2^-9, 2^8 for A and B alike
  t.sfb = t.sfa;
  std::vector<uint16_t> c(1, kPoisonFp16);
  Operands ops = t.view();
  ops.c = c.data();
  for (host::Isa isa : host::isas_here()) {
    c[0] = kPoisonFp16;
    host::gemm(s, ops, isa);
    EXPECT_EQ(c[0], 0u) << host::isa_name(isa);
  }
  Operands rops = t.view();
  exact_gemm(s, rops);
  EXPECT_EQ(t.c[0], 0x0040u);  // 2^-18 = 64 * 2^-24, the fp16 subnormal 0x0040
}

TEST(HostKernel, ConfigurationsAreTheInstructionSetsOfThisCpu) {
  auto k = make_gemm("host", Role::Kernel);
  ASSERT_TRUE(k);
  const Shape s{16, 16, 64, 1};
  std::vector<std::string> names;
  for (host::Isa isa : host::isas_here()) names.push_back(host::isa_name(isa));
  EXPECT_EQ(k->configurations(s), names);
  EXPECT_EQ(k->configuration(s), names.front());  // the fastest by default
  EXPECT_EQ(k->set_configuration("generic", s), "");
  EXPECT_EQ(k->configuration(s), "generic");
  const std::string why = k->set_configuration("avx9", s);
  EXPECT_NE(why.find("not an instruction set this CPU runs (expected one of: " + names.front()),
            std::string::npos)
      << why;
  EXPECT_EQ(k->configuration(s), "generic");  // a refused name changes nothing
  EXPECT_EQ(k->set_configuration("", s), "");
  EXPECT_EQ(k->configuration(s), names.front());
}
