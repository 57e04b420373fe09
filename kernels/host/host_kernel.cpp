// `host`: the kernel under test on a machine without a GPU. Written independently of the exact
// reference on purpose (dequantize to float, FP32 accumulation, like the naive GPU kernel), so
// that verifying it against the reference is a real check that can fail.
#include <vector>

#include "src/core/parallel.hpp"
#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {
namespace {

// Dequantizes `rows` rows of one batch into floats: value * scale, exact in float.
void dequantize_rows(const uint8_t* q, const uint8_t* sf, int64_t rows, int64_t k, float* out) {
  const int64_t kb_count = k / kBlockSize;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kk = 0; kk < k; ++kk)
      out[r * k + kk] = e2m1_decode(fp4_at(q + r * (k / 2), kk)) *
                        scale_decode(sf[r * kb_count + kk / kBlockSize]);
}

class HostGemm final : public Gemm {
 public:
  std::string name() const override { return "host"; }
  std::string description() const override {
    return "CPU, dequantize to float then FP32 GEMM (the kernel under test without a GPU)";
  }
  Space space() const override { return Space::Host; }
  Availability availability(const DeviceInfo&) const override { return {true, {}}; }
  void run(const Shape& s, const Operands& ops, void*, cudaStream_t) override {
    std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.n * s.k));
    for (int64_t batch = 0; batch < s.l; ++batch) {
      dequantize_rows(ops.a + batch * s.m * s.k / 2, ops.sfa + batch * s.m * (s.k / kBlockSize),
                      s.m, s.k, a.data());
      dequantize_rows(ops.b + batch * s.n * s.k / 2, ops.sfb + batch * s.n * (s.k / kBlockSize),
                      s.n, s.k, b.data());
      uint16_t* c = ops.c + batch * s.m * s.n;
      parallel_for(s.m, [&](int64_t i) {
        const float* ar = a.data() + i * s.k;
        for (int64_t j = 0; j < s.n; ++j) {
          const float* br = b.data() + j * s.k;
          float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // K is a multiple of 16
          for (int64_t kk = 0; kk < s.k; kk += 8)
            for (int u = 0; u < 8; ++u) acc[u] += ar[kk + u] * br[kk + u];
          const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                            ((acc[4] + acc[5]) + (acc[6] + acc[7]));
          c[i * s.n + j] = fp16_bits_from_double(sum);  // exact widening, one rounding
        }
      });
    }
  }
};

}  // namespace

std::unique_ptr<Gemm> make_host_gemm() { return std::make_unique<HostGemm>(); }

}  // namespace nvfp4
