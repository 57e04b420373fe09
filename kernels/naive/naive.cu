// `naive`: one thread per output element, FP32 accumulation, fp16 output. Portable to every
// sm_80+ GPU and correct for every valid shape; the baseline every other kernel must match.
#include <cuda_fp16.h>

#include <fmt/format.h>

#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {
namespace {

__global__ void naive_gemm_kernel(int64_t m, int64_t n, int64_t k, const uint8_t* __restrict__ a,
                                  const uint8_t* __restrict__ b, const uint8_t* __restrict__ sfa,
                                  const uint8_t* __restrict__ sfb, __half* __restrict__ c) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t batch = blockIdx.z;
  if (i >= m || j >= n) return;
  const int64_t kb_count = k / kBlockSize;
  const uint8_t* arow = a + (batch * m + i) * (k / 2);
  const uint8_t* brow = b + (batch * n + j) * (k / 2);
  const uint8_t* sarow = sfa + (batch * m + i) * kb_count;
  const uint8_t* sbrow = sfb + (batch * n + j) * kb_count;
  float acc = 0.0f;
  for (int64_t kb = 0; kb < kb_count; ++kb) {
    float block = 0.0f;  // exact: products are multiples of 1/4 below 36
    for (int e = 0; e < kBlockSize; ++e) {
      const int64_t kk = kb * kBlockSize + e;
      block += e2m1_decode(fp4_at(arow, kk)) * e2m1_decode(fp4_at(brow, kk));
    }
    acc += block * (scale_decode(sarow[kb]) * scale_decode(sbrow[kb]));
  }
  c[(batch * m + i) * n + j] = __float2half_rn(acc);
}

class NaiveGemm final : public Gemm {
 public:
  std::string name() const override { return "naive"; }
  std::string description() const override {
    return "portable CUDA, one thread per output, FP32 accumulation (any sm_80+ GPU)";
  }
  Availability availability(const DeviceInfo& dev) const override {
    if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
    if (dev.cc_major < 8)
      return {false, fmt::format("needs compute capability 8.0+, {} has {}", dev.name,
                                 dev.cc_string())};
    return {true, {}};
  }
  std::string shape_error(const Shape& s) const override {
    if (s.l > 65535) return "L must be at most 65535 (grid z limit)";
    if ((s.m + 15) / 16 > 65535) return "M must be at most 1048560 (grid y limit)";
    return {};
  }
  void run(const Shape& s, const Operands& ops, void*, cudaStream_t stream) override {
    const dim3 block(16, 16);
    const dim3 grid(static_cast<unsigned>((s.n + 15) / 16), static_cast<unsigned>((s.m + 15) / 16),
                    static_cast<unsigned>(s.l));
    naive_gemm_kernel<<<grid, block, 0, stream>>>(s.m, s.n, s.k, ops.a, ops.b, ops.sfa, ops.sfb,
                                                  reinterpret_cast<__half*>(ops.c));
    NVFP4_CUDA_CHECK_LAUNCH();
  }
  int auto_rank() const override { return 1; }
};

}  // namespace

std::unique_ptr<Gemm> make_naive_gemm() { return std::make_unique<NaiveGemm>(); }

}  // namespace nvfp4
