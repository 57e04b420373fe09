// The GPU references and peers against the exact CPU reference (GPU MODE inputs):
//  - the dequantization kernel is exact (FP16 and BF16), the FP8 block scales match the host;
//  - cublaslt-f16 agrees with cpu-exact on the ten GPU MODE test shapes (every element), on
//    batched and unaligned shapes, and on ~4000 sampled elements of the three benchmark shapes;
//  - cublaslt-nvfp4 does the same where it is available (Blackwell), and on Hopper cuBLASLt
//    answers NOT_SUPPORTED as docs/facts.md section 3 records;
//  - every available peer runs on 128x256x256 (L = 1 and 2) and writes every output element;
//    same-numerics peers agree with cpu-exact, the others are close in relative terms;
//  - the naive kernel agrees with cublaslt-f16.
// Every test skips, with the reason, without a GPU or where an implementation is unavailable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/device/cublaslt_gemm.hpp"
#include "src/device/cublaslt_library.hpp"
#include "src/device/device_info.hpp"
#include "src/format/fp8_block_scales.hpp"
#include "src/format/nvfp4.hpp"
#include "tests/gpu_test.hpp"
#include "src/registry/registry.hpp"
#include "kernels/peers/fp8_quant.hpp"
#include "src/problem/problem.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "kernels/reference/cublaslt_references.hpp"
#include "src/problem/dequant.hpp"

using namespace nvfp4;

namespace {

// Generated GPU MODE operands on the device, their host copy, and a stream.
struct Case {
  Shape s;
  Stream stream;
  DeviceTensors d;
  HostTensors h;
  explicit Case(const Shape& shape, uint64_t seed = 7) : s(shape) {
    d.allocate(s);
    h.allocate(s);
    generate_device(Problem{s, Dist::GpuMode, seed}, d, stream.get());
    stream.sync();
    copy_inputs_to_host(d, h);
  }
  int64_t c_elements() const { return s.l * s.m * s.n; }
  std::vector<uint16_t> device_c() const {
    std::vector<uint16_t> out(static_cast<size_t>(c_elements()));
    NVFP4_CUDA_CHECK(cudaMemcpy(out.data(), d.c.get(), out.size() * 2, cudaMemcpyDeviceToHost));
    return out;
  }
  // The exact reference for all of C.
  std::vector<uint16_t> exact() {
    exact_gemm(s, h.view());
    return h.c;
  }
};

// Poisons C, prepares and runs `g`, returns C.
std::vector<uint16_t> run_on_device(Gemm& g, Case& c) {
  DeviceBuffer workspace(g.workspace_bytes(c.s));
  poison_device(c.d.c.get<uint16_t>(), c.c_elements(), c.stream.get());
  g.prepare(c.s, c.d.view(), c.stream.get());
  g.run(c.s, c.d.view(), workspace.get(), c.stream.get());
  c.stream.sync();
  return c.device_c();
}

// The GPU MODE rule: |got - exp| <= 1e-3 + 1e-3 |exp|, and NaN / +Inf / -Inf must agree.
bool close_fp16(uint16_t got, uint16_t exp) {
  const double g = fp16_bits_to_double(got), e = fp16_bits_to_double(exp);
  if (std::isnan(g) || std::isnan(e)) return std::isnan(g) && std::isnan(e);
  if (std::isinf(g) || std::isinf(e)) return g == e;
  return std::fabs(g - e) <= 1e-3 + 1e-3 * std::fabs(e);
}

struct Tally {
  int64_t checked = 0, bad = 0, unwritten = 0;
  std::string first;
  void add(const Shape& s, int64_t idx, uint16_t got, uint16_t exp) {
    ++checked;
    if (got == kPoisonFp16) ++unwritten;
    if (got == kPoisonFp16 || !close_fp16(got, exp)) {
      if (++bad <= 3) {
        const int64_t b = idx / (s.m * s.n), i = idx / s.n % s.m, j = idx % s.n;
        first += "\n  C[" + std::to_string(b) + "," + std::to_string(i) + "," + std::to_string(j) +
                 "] got " + std::to_string(fp16_bits_to_double(got)) + " expected " +
                 std::to_string(fp16_bits_to_double(exp));
      }
    }
  }
};

std::string shape_text(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         " L=" + std::to_string(s.l);
}

void expect_all_close(const Shape& s, const std::vector<uint16_t>& got,
                      const std::vector<uint16_t>& exp, const std::string& who) {
  ASSERT_EQ(got.size(), exp.size());
  Tally t;
  for (size_t i = 0; i < got.size(); ++i) t.add(s, int64_t(i), got[i], exp[i]);
  EXPECT_EQ(t.unwritten, 0) << who << " " << shape_text(s) << ": unwritten elements";
  EXPECT_EQ(t.bad, 0) << who << " " << shape_text(s) << ": " << t.bad << " of " << t.checked
                      << " elements differ" << t.first;
}

// Takes the named implementation if it can run here; else skips the test with the reason.
std::unique_ptr<Gemm> available_or_null(const std::string& name, Role role, std::string& why) {
  auto g = make_gemm(name, role);
  if (!g) {
    why = name + " is not registered";
    return nullptr;
  }
  const Availability av = g->availability(query_device(0));
  if (!av.ok) {
    why = name + " is unavailable here: " + av.reason;
    return nullptr;
  }
  return g;
}

#define NVFP4_REQUIRE(var, name, role)                 \
  std::string var##_why;                               \
  auto var = available_or_null(name, role, var##_why); \
  if (!var) GTEST_SKIP() << var##_why

const Shape kTestShapes[] = {{128, 256, 256, 1},   {128, 1536, 7168, 1}, {128, 3072, 1536, 1},
                             {256, 7168, 256, 1},  {256, 7168, 2048, 1}, {2304, 4608, 7168, 1},
                             {384, 7168, 2304, 1}, {512, 512, 7168, 1},  {512, 4096, 512, 1},
                             {512, 1536, 7168, 1}};
const Shape kBenchShapes[] = {{128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}};

void check_full(Gemm& g, const Shape& s) {
  Case c(s);
  const std::vector<uint16_t> got = run_on_device(g, c);
  expect_all_close(s, got, c.exact(), g.name());
}

void check_sampled(Gemm& g, const Shape& s, int samples) {
  Case c(s);
  const std::vector<uint16_t> got = run_on_device(g, c);
  const Operands host = c.h.view();
  std::mt19937_64 rng(12345);
  Tally t;
  auto check = [&](int64_t b, int64_t i, int64_t j) {
    const int64_t idx = (b * s.m + i) * s.n + j;
    t.add(s, idx, got[size_t(idx)], exact_element_fp16(s, host, b, i, j));
  };
  for (int64_t b = 0; b < s.l; ++b) {  // corners of every batch
    check(b, 0, 0);
    check(b, 0, s.n - 1);
    check(b, s.m - 1, 0);
    check(b, s.m - 1, s.n - 1);
  }
  for (int q = 0; q < samples; ++q)
    check(int64_t(rng() % uint64_t(s.l)), int64_t(rng() % uint64_t(s.m)),
          int64_t(rng() % uint64_t(s.n)));
  int64_t unwritten = 0;
  for (uint16_t v : got) unwritten += v == kPoisonFp16;
  EXPECT_EQ(unwritten, 0) << g.name() << " " << shape_text(s) << ": unwritten elements";
  EXPECT_EQ(t.bad, 0) << g.name() << " " << shape_text(s) << ": " << t.bad << " of " << t.checked
                      << " sampled elements differ" << t.first;
}

}  // namespace

TEST(Dequant, IsExactInFp16AndBf16) {
  NVFP4_REQUIRE_GPU();
  const Shape s{96, 64, 512, 2};
  Case c(s);
  const int64_t blocks = s.l * s.m * (s.k / kBlockSize);
  for (Dequant16 type : {Dequant16::F16, Dequant16::BF16}) {
    DeviceBuffer out(size_t(blocks * kBlockSize) * 2);
    dequantize_nvfp4(c.d.a.get<uint8_t>(), c.d.sfa.get<uint8_t>(), blocks, type,
                     out.get<uint16_t>(), c.stream.get());
    c.stream.sync();
    std::vector<uint16_t> got(size_t(blocks * kBlockSize));
    NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size() * 2, cudaMemcpyDeviceToHost));
    int64_t bad = 0;
    for (int64_t e = 0; e < blocks * kBlockSize; ++e) {
      const float v =
          e2m1_decode(fp4_at(c.h.a.data(), e)) * scale_decode(c.h.sfa[size_t(e / kBlockSize)]);
      uint32_t fbits;
      std::memcpy(&fbits, &v, 4);
      // Both conversions are exact: fp16 from double, bf16 = the float's upper half.
      const uint16_t want =
          type == Dequant16::F16 ? fp16_bits_from_double(v) : uint16_t(fbits >> 16);
      if (type == Dequant16::BF16) {
        ASSERT_EQ(fbits & 0xFFFFu, 0u) << "not exact in bf16: " << v;
      }
      bad += got[size_t(e)] != want;
    }
    EXPECT_EQ(bad, 0) << (type == Dequant16::F16 ? "fp16" : "bf16");
  }
}

TEST(Fp8Quant, BlockScalesMatchTheHost) {
  NVFP4_REQUIRE_GPU();
  const Shape s{200, 64, 288, 2};  // a partial row block and a partial 128-wide K block
  Case c(s);
  for (Fp8BlockKind kind : {Fp8BlockKind::Vec128, Fp8BlockKind::Blk128x128}) {
    const Fp8BlockScaleLayout lay{kind, s.m, s.k};
    DeviceBuffer scales(size_t(s.l * lay.batch_stride()) * 4);
    fp8_block_scales(c.d.a.get<uint8_t>(), c.d.sfa.get<uint8_t>(), lay, s.l, scales.get<float>(),
                     c.stream.get());
    c.stream.sync();
    std::vector<float> got(size_t(s.l * lay.batch_stride()));
    NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), scales.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<float> amax(got.size(), 0.0f);
    std::vector<char> used(got.size(), 0);
    for (int64_t b = 0; b < s.l; ++b)
      for (int64_t r = 0; r < s.m; ++r)
        for (int64_t k = 0; k < s.k; ++k) {
          const int64_t row = b * s.m + r;
          const float v = std::fabs(e2m1_decode(fp4_at(c.h.a.data() + row * (s.k / 2), k)) *
                                    scale_decode(c.h.sfa[size_t(row * (s.k / 16) + k / 16)]));
          const size_t at = size_t(b * lay.batch_stride() + lay.index(r, k / 128));
          amax[at] = std::max(amax[at], v);
          used[at] = 1;
        }
    for (size_t i = 0; i < got.size(); ++i) {
      const float want = !used[i] ? 0.0f : amax[i] > 0 ? amax[i] / 448.0f : 1.0f;
      ASSERT_EQ(got[i], want) << "scale " << i
                              << (kind == Fp8BlockKind::Vec128 ? " (1x128)" : " (128x128)");
    }
  }
}

TEST(CublasLtF16, MatchesExactOnTheGpuModeTestShapes) {
  NVFP4_REQUIRE_GPU();
  NVFP4_REQUIRE(g, "cublaslt-f16", Role::Reference);
  for (const Shape& s : kTestShapes) check_full(*g, s);
}

TEST(CublasLtF16, MatchesExactOnBatchedAndUnalignedShapes) {
  NVFP4_REQUIRE_GPU();
  NVFP4_REQUIRE(g, "cublaslt-f16", Role::Reference);
  check_full(*g, Shape{128, 256, 256, 3});
  check_full(*g, Shape{100, 72, 48, 2});  // batch offsets only 64/128-byte aligned
  check_full(*g, Shape{1, 1, 16, 1});
}

TEST(CublasLtF16, MatchesSampledExactOnTheBenchmarkShapes) {
  NVFP4_REQUIRE_GPU();
  NVFP4_REQUIRE(g, "cublaslt-f16", Role::Reference);
  for (const Shape& s : kBenchShapes) check_sampled(*g, s, 4000);
}

TEST(CublasLtNvfp4, OnHopperCublasLtAnswersNotSupported) {
  NVFP4_REQUIRE_GPU();
  const DeviceInfo dev = query_device(0);
  if (dev.cc() >= 100) GTEST_SKIP() << dev.name << " has compute capability " << dev.cc_string();
  const auto g = make_gemm("cublaslt-nvfp4", Role::Reference);
  const Availability av = g->availability(dev);
  EXPECT_FALSE(av.ok);
  EXPECT_NE(av.reason.find("compute capability 10.0"), std::string::npos) << av.reason;
  // Past the gate, the heuristic itself refuses (docs/facts.md section 3: status 15, 0 algorithms on H200).
  const Availability probe = lt::probe(lt::make_nvfp4_config(kProbeShape, lt::OutType::F16));
  EXPECT_FALSE(probe.ok);
  std::cout << "[ info ] cuBLASLt NVFP4 on " << dev.name << ": " << probe.reason << "\n";
  if (dev.cc() == 90) {
    EXPECT_EQ(probe.reason.rfind("cuBLASLt: CUBLAS_STATUS_NOT_SUPPORTED", 0), 0u) << probe.reason;
  }
}

TEST(CublasLtNvfp4, MatchesExactWhereAvailable) {
  NVFP4_REQUIRE_GPU();
  NVFP4_REQUIRE(g, "cublaslt-nvfp4", Role::Reference);
  for (const Shape& s : kTestShapes) check_full(*g, s);
  check_full(*g, Shape{128, 256, 256, 3});  // one cuBLASLt call per batch
  for (const Shape& s : kBenchShapes) check_sampled(*g, s, 4000);
}

TEST(Peers, EveryAvailablePeerWritesEveryElement) {
  NVFP4_REQUIRE_GPU();
  const DeviceInfo dev = query_device(0);
  int ran = 0;
  for (const std::string& name : names_of(Role::Peer)) {
    auto g = make_gemm(name, Role::Peer);
    const Availability av = g->availability(dev);
    if (!av.ok) {
      std::cout << "[ skip ] peer " << name << ": " << av.reason << "\n";
      continue;
    }
    ++ran;
    for (int64_t l : {1, 2}) {
      const Shape s{128, 256, 256, l};
      Case c(s);
      const std::vector<uint16_t> got = run_on_device(*g, c);
      const std::vector<uint16_t> exp = c.exact();
      int64_t unwritten = 0;
      for (uint16_t v : got) unwritten += v == kPoisonFp16;
      EXPECT_EQ(unwritten, 0) << name << " " << shape_text(s);
      if (g->same_numerics()) {
        expect_all_close(s, got, exp, name);
        continue;
      }
      // Other numerics: close in the relative (Frobenius) sense; a wrong layout or scale
      // assignment would be far off. bf16 outputs are decoded as bf16.
      const bool bf16_out = g->description().find("bf16 output") != std::string::npos ||
                            g->description().find("BF16 output") != std::string::npos;
      double err = 0, norm = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double v;
        if (bf16_out) {
          const uint32_t bits = uint32_t(got[i]) << 16;
          float f;
          std::memcpy(&f, &bits, 4);
          v = f;
        } else {
          v = fp16_bits_to_double(got[i]);
        }
        const double e = fp16_bits_to_double(exp[i]);
        err += (v - e) * (v - e);
        norm += e * e;
      }
      const double rel = std::sqrt(err / norm);
      std::cout << "[ info ] peer " << name << " " << shape_text(s) << ": relative error " << rel
                << " (" << g->description() << ")\n";
      EXPECT_LT(rel, name == "bf16-predeq" ? 0.01 : 0.1) << name << " " << shape_text(s);
    }
  }
  EXPECT_GT(ran, 0) << "no peer can run on " << dev.name;
}

TEST(Naive, AgreesWithCublasLtF16) {
  NVFP4_REQUIRE_GPU();
  NVFP4_REQUIRE(ref, "cublaslt-f16", Role::Reference);
  NVFP4_REQUIRE(naive, "naive", Role::Kernel);
  for (const Shape& s : {Shape{128, 256, 256, 1}, Shape{256, 7168, 256, 1},
                         Shape{128, 7168, 2048, 1}, Shape{128, 256, 512, 2}}) {
    Case c(s);
    const std::vector<uint16_t> want = run_on_device(*ref, c);
    const std::vector<uint16_t> got = run_on_device(*naive, c);
    expect_all_close(s, got, want, "naive vs cublaslt-f16");
  }
}

// cuBLASLt is opened on first use (src/device/cublaslt_library.hpp): with a GPU, the device
// query opens it and reports the version of the library it opened.
TEST(GpuLtLibrary, TheDeviceQueryOpensItAndReportsItsVersion) {
  NVFP4_REQUIRE_GPU();
  const DeviceInfo d = query_device(0);
  EXPECT_TRUE(lt::library_loaded());
  EXPECT_EQ(d.cublaslt_version, cublasLtGetVersion());
  EXPECT_GE(d.cublaslt_version, size_t(130000));
}
