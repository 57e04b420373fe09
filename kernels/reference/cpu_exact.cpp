#include "kernels/reference/cpu_exact.hpp"

#include <vector>

#include "src/core/parallel.hpp"
#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4 {

double exact_element(const Shape& s, const Operands& h, int64_t batch, int64_t i, int64_t j) {
  const int64_t kbs = s.k / kBlockSize;
  const uint8_t* ar = h.a + (batch * s.m + i) * (s.k / 2);
  const uint8_t* br = h.b + (batch * s.n + j) * (s.k / 2);
  const uint8_t* sar = h.sfa + (batch * s.m + i) * kbs;
  const uint8_t* sbr = h.sfb + (batch * s.n + j) * kbs;
  double acc = 0.0;
  for (int64_t kb = 0; kb < kbs; ++kb) {
    int32_t block = 0;
    for (int e = 0; e < kBlockSize; ++e) {
      const int64_t kk = kb * kBlockSize + e;
      block += e2m1_twice(fp4_at(ar, kk)) * e2m1_twice(fp4_at(br, kk));
    }
    // sa*sb and block*(sa*sb) are exact in float and double alike (<= 20 significant bits).
    const double scale = double(scale_decode(sar[kb]) * scale_decode(sbr[kb]));
    acc += double(block) * scale;
  }
  return acc * 0.25;  // (2a)(2b) = 4ab
}

uint16_t exact_element_fp16(const Shape& s, const Operands& h, int64_t batch, int64_t i,
                            int64_t j) {
  return fp16_bits_from_double(exact_element(s, h, batch, i, j));
}

namespace {

typedef float v8f __attribute__((vector_size(32)));
constexpr int kRows = 4;   // rows of A per micro-tile
constexpr int kCols = 16;  // columns (rows of B) per micro-tile: two 8-wide vectors

// One 16-column tile of C for rows [0, m): the block sums are small integers, exact in float
// whatever the order or FMA contraction; each block's scaled sum is exact in float too, and is
// added to a double accumulator in K order - the same arithmetic as exact_element.
__attribute__((target_clones("avx2", "default"))) void column_tile(
    int64_t m, int64_t k, const float* a2, const uint8_t* sfa, const float* bt, const float* sbt,
    double* acc_rows /* [kRows][kCols] scratch */, int64_t cols_valid,
    int64_t n, int64_t j0, uint16_t* c) {
  const int64_t kbs = k / kBlockSize;
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int64_t rows = (m - i0) < kRows ? (m - i0) : kRows;
    for (int r = 0; r < kRows * kCols; ++r) acc_rows[r] = 0.0;
    for (int64_t kb = 0; kb < kbs; ++kb) {
      v8f sum[kRows][2] = {};
      const float* bk = bt + kb * kBlockSize * kCols;
      for (int e = 0; e < kBlockSize; ++e) {
        v8f b0, b1;
        __builtin_memcpy(&b0, bk + e * kCols, sizeof b0);
        __builtin_memcpy(&b1, bk + e * kCols + 8, sizeof b1);
        for (int r = 0; r < kRows; ++r) {
          const int64_t row = i0 + (r < rows ? r : 0);
          const float av = a2[row * k + kb * kBlockSize + e];
          sum[r][0] += av * b0;
          sum[r][1] += av * b1;
        }
      }
      v8f sb0, sb1;
      __builtin_memcpy(&sb0, sbt + kb * kCols, sizeof sb0);
      __builtin_memcpy(&sb1, sbt + kb * kCols + 8, sizeof sb1);
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = i0 + (r < rows ? r : 0);
        const float sa = scale_decode(sfa[row * kbs + kb]);
        const v8f p0 = sum[r][0] * (sa * sb0);
        const v8f p1 = sum[r][1] * (sa * sb1);
        for (int q = 0; q < 8; ++q) {
          acc_rows[r * kCols + q] += double(p0[q]);
          acc_rows[r * kCols + 8 + q] += double(p1[q]);
        }
      }
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols_valid; ++q)
        c[(i0 + r) * n + j0 + q] = fp16_bits_from_double(acc_rows[r * kCols + q] * 0.25);
  }
}

}  // namespace

std::vector<uint16_t> exact_at(const Shape& s, const Operands& host, const std::vector<int64_t>& idx) {
  std::vector<uint16_t> vals(idx.size());
  parallel_for(int64_t(idx.size()), [&](int64_t t) {
    const int64_t e = idx[size_t(t)];
    vals[size_t(t)] = exact_element_fp16(s, host, e / (s.m * s.n), e / s.n % s.m, e % s.n);
  });
  return vals;
}

void exact_gemm(const Shape& s, const Operands& h) {
  const int64_t kbs = s.k / kBlockSize;
  std::vector<float> a2(static_cast<size_t>(s.m * s.k));
  for (int64_t batch = 0; batch < s.l; ++batch) {
    const Operands x = batch_slice(h, s, batch);
    const uint8_t *a = x.a, *b = x.b, *sfa = x.sfa, *sfb = x.sfb;
    uint16_t* c = x.c;
    parallel_for(s.m, [&](int64_t i) {
      for (int64_t kk = 0; kk < s.k; ++kk)
        a2[i * s.k + kk] = float(e2m1_twice(fp4_at(a + i * (s.k / 2), kk)));
    });
    const int64_t tiles = (s.n + kCols - 1) / kCols;
    parallel_for(tiles, [&](int64_t t) {
      const int64_t j0 = t * kCols;
      const int64_t cols = (s.n - j0) < kCols ? (s.n - j0) : kCols;
      // B's 16 rows transposed to [K][16] (2b as float) and their scales to [K/16][16];
      // missing columns of a ragged last tile are zero.
      std::vector<float> bt(static_cast<size_t>(s.k * kCols), 0.0f);
      std::vector<float> sbt(static_cast<size_t>(kbs * kCols), 0.0f);
      for (int64_t q = 0; q < cols; ++q) {
        const uint8_t* br = b + (j0 + q) * (s.k / 2);
        for (int64_t kk = 0; kk < s.k; ++kk) bt[kk * kCols + q] = float(e2m1_twice(fp4_at(br, kk)));
        for (int64_t kb = 0; kb < kbs; ++kb)
          sbt[kb * kCols + q] = scale_decode(sfb[(j0 + q) * kbs + kb]);
      }
      double acc[kRows * kCols];
      column_tile(s.m, s.k, a2.data(), sfa, bt.data(), sbt.data(), acc, cols, s.n, j0, c);
    });
  }
}

namespace {

class CpuExactReference final : public Gemm {
 public:
  std::string name() const override { return "cpu-exact"; }
  std::string description() const override {
    return "CPU, integer block sums, scales and accumulation in double, one fp16 rounding";
  }
  Role role() const override { return Role::Reference; }
  Space space() const override { return Space::Host; }
  Availability availability(const DeviceInfo&) const override { return {true, {}}; }
  void run(const Shape& s, const Operands& ops, void*, cudaStream_t) override { exact_gemm(s, ops); }
  // Lowest of the references: --reference auto prefers cublaslt-nvfp4 (3), then cublaslt-f16 (2).
  int auto_rank() const override { return 1; }
};

}  // namespace

std::unique_ptr<Gemm> make_cpu_exact_reference() { return std::make_unique<CpuExactReference>(); }

}  // namespace nvfp4
