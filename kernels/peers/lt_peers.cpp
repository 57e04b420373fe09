// The cuBLASLt peers on converted operands: f16-predeq, bf16-predeq, fp8-tensor, fp8-block.
#include <fmt/format.h>

#include <vector>

#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cublaslt_gemm.hpp"
#include "src/device/device_info.hpp"
#include "src/format/fp8_block_scales.hpp"
#include "src/format/nvfp4.hpp"
#include "kernels/peers/fp8_quant.hpp"
#include "kernels/peers/peers.hpp"
#include "kernels/reference/cublaslt_references.hpp"
#include "src/problem/dequant.hpp"

namespace nvfp4 {
namespace {

// What every peer here shares: a cuBLASLt plan prepared for one shape on converted operands
// owned by the peer; run() is the GEMM alone.
class LtConvertedPeer : public Gemm {
 public:
  Role role() const override { return Role::Peer; }
  size_t workspace_bytes(const Shape&) const override { return lt::kWorkspaceBytes; }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    if (!plan_.ready()) throw runtime_error(name() + ": run() before prepare()");
    if (s.m != shape_.m || s.n != shape_.n || s.k != shape_.k || s.l != shape_.l)
      throw runtime_error(name() + ": run() for another shape than prepare()'s");
    plan_.run(pointers(ops), workspace, lt::kWorkspaceBytes, stream);
  }

 protected:
  // Prepares the plan for `c` on the converted operands (conversion must already be enqueued
  // on `stream`); waits for the conversion so that run() may use any stream.
  void finish_prepare(const Shape& s, const lt::Config& c, const Operands& ops,
                      cudaStream_t stream) {
    const std::string reason = plan_.prepare(c, pointers(ops));
    if (!reason.empty()) throw usage_error(fmt::format("{}: {}", name(), reason));
    NVFP4_CUDA_CHECK(cudaStreamSynchronize(stream));
    shape_ = s;
  }
  lt::Pointers pointers(const Operands& ops) const {
    return {a_.get(), b_.get(), a_scale_.get(), b_scale_.get(), ops.c};
  }
  lt::Plan plan_;
  Shape shape_;
  DeviceBuffer a_, b_, a_scale_, b_scale_;  // converted operands and their scales
};

// ---------------------------------------------------------------------------------------------
class Predeq16Peer final : public LtConvertedPeer {
 public:
  explicit Predeq16Peer(Dequant16 type) : type_(type) {}
  std::string name() const override { return bf16() ? "bf16-predeq" : "f16-predeq"; }
  std::string description() const override {
    return bf16() ? "cuBLASLt BF16 GEMM on operands dequantized before timing, FP32 accumulation, "
                    "BF16 output (cuBLASLt has no bf16-in/fp16-out); any sm_80+ GPU"
                  : "cuBLASLt FP16 GEMM on operands dequantized before timing, FP32 accumulation, "
                    "fp16 output; any sm_80+ GPU";
  }
  Availability availability(const DeviceInfo& dev) const override {
    const Availability cc =
        lt::cc_gate(dev, 80, 0, fmt::format("cuBLASLt {} GEMM", bf16() ? "BF16" : "FP16"));
    if (!cc.ok) return cc;
    return lt::probe(config(kProbeShape));
  }
  std::string shape_error(const Shape& s) const override {
    return lt::lt_shape_error(s, in(), out());
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    a_ = DeviceBuffer(size_t(s.l * s.m * s.k) * 2);
    b_ = DeviceBuffer(size_t(s.l * s.n * s.k) * 2);
    dequantize_nvfp4(ops.a, ops.sfa, s.l * s.m * (s.k / kBlockSize), type_, a_.get<uint16_t>(),
                     stream);
    dequantize_nvfp4(ops.b, ops.sfb, s.l * s.n * (s.k / kBlockSize), type_, b_.get<uint16_t>(),
                     stream);
    finish_prepare(s, config(s), ops, stream);
  }
  // bf16 output rounds differently from the fp16 reference.
  bool same_numerics() const override { return !bf16(); }

 private:
  bool bf16() const { return type_ == Dequant16::BF16; }
  lt::InType in() const { return bf16() ? lt::InType::BF16 : lt::InType::F16; }
  lt::OutType out() const { return bf16() ? lt::OutType::BF16 : lt::OutType::F16; }
  lt::Config config(const Shape& s) const {
    return lt::make_config(s, in(), out(), lt::ScaleMode::None, lt::ScaleMode::None);
  }
  Dequant16 type_;
};

// ---------------------------------------------------------------------------------------------
class Fp8TensorPeer final : public LtConvertedPeer {
 public:
  std::string name() const override { return "fp8-tensor"; }
  std::string description() const override {
    return "cuBLASLt FP8 E4M3 GEMM, one fp32 scale per tensor (amax/448), requantized before "
           "timing, FP32 accumulation (no fast accumulation), fp16 output; cc 8.9+; different "
           "numerics, not verified";
  }
  Availability availability(const DeviceInfo& dev) const override {
    const Availability cc = lt::cc_gate(dev, 89, 0, "cuBLASLt FP8 GEMM");
    if (!cc.ok) return cc;
    return lt::probe(config(kProbeShape));
  }
  std::string shape_error(const Shape& s) const override {
    return lt::lt_shape_error(s, lt::InType::FP8_E4M3, lt::OutType::F16);
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    const int64_t blocks_a = s.l * s.m * (s.k / kBlockSize);
    const int64_t blocks_b = s.l * s.n * (s.k / kBlockSize);
    a_ = DeviceBuffer(size_t(s.l * s.m * s.k));
    b_ = DeviceBuffer(size_t(s.l * s.n * s.k));
    a_scale_ = DeviceBuffer(256);
    b_scale_ = DeviceBuffer(256);
    DeviceBuffer scratch(2 * sizeof(uint32_t));
    uint32_t* sc = scratch.get<uint32_t>();
    fp8_tensor_scale(ops.a, ops.sfa, blocks_a, a_scale_.get<float>(), sc, stream);
    fp8_tensor_scale(ops.b, ops.sfb, blocks_b, b_scale_.get<float>(), sc + 1, stream);
    quantize_fp8_tensor(ops.a, ops.sfa, blocks_a, a_scale_.get<float>(), a_.get<uint8_t>(), stream);
    quantize_fp8_tensor(ops.b, ops.sfb, blocks_b, b_scale_.get<float>(), b_.get<uint8_t>(), stream);
    finish_prepare(s, config(s), ops, stream);  // synchronizes before `scratch` is freed
  }
  bool same_numerics() const override { return false; }

 private:
  static lt::Config config(const Shape& s) {
    return lt::make_config(s, lt::InType::FP8_E4M3, lt::OutType::F16, lt::ScaleMode::Scalar32F,
                           lt::ScaleMode::Scalar32F);
  }
};

// ---------------------------------------------------------------------------------------------
// DeepSeek-style scaling: activations (our A) 1x128, weights (our B) 128x128. cuBLASLt's
// documentation and samples show both assignments (the CUDALibrarySamples sample scales its
// cuBLAS A by VEC128, PyTorch's weights-first call scales cuBLAS A by BLK128x128), and the
// fp16-output support of the block-scaled kernels is not documented, so prepare() takes the
// first of these that the heuristic accepts and says which in description().
struct Fp8BlockVariant {
  Fp8BlockKind our_a, our_b;
  lt::OutType out;
};
constexpr Fp8BlockVariant kFp8BlockVariants[] = {
    {Fp8BlockKind::Vec128, Fp8BlockKind::Blk128x128, lt::OutType::F16},
    {Fp8BlockKind::Blk128x128, Fp8BlockKind::Vec128, lt::OutType::F16},
    {Fp8BlockKind::Vec128, Fp8BlockKind::Blk128x128, lt::OutType::BF16},
    {Fp8BlockKind::Blk128x128, Fp8BlockKind::Vec128, lt::OutType::BF16},
};

lt::ScaleMode to_mode(Fp8BlockKind k) {
  return k == Fp8BlockKind::Vec128 ? lt::ScaleMode::Vec128_32F : lt::ScaleMode::Blk128x128_32F;
}

lt::Config fp8_block_config(const Shape& s, const Fp8BlockVariant& v) {
  return lt::make_config(s, lt::InType::FP8_E4M3, v.out, to_mode(v.our_a), to_mode(v.our_b));
}

std::string variant_text(const Fp8BlockVariant& v) {
  return fmt::format("A {}, B {}, {} output", v.our_a == Fp8BlockKind::Vec128 ? "1x128" : "128x128",
                     v.our_b == Fp8BlockKind::Vec128 ? "1x128" : "128x128",
                     lt::out_type_name(v.out));
}

class Fp8BlockPeer final : public LtConvertedPeer {
 public:
  std::string name() const override { return "fp8-block"; }
  std::string description() const override {
    return "cuBLASLt FP8 E4M3 GEMM with fp32 block scales (1x128 VEC128_32F x 128x128 "
           "BLK128x128_32F), requantized before timing, FP32 accumulation; Hopper only; "
           "different numerics, not verified" +
           (chosen_ ? "; chosen: " + variant_text(*chosen_) : std::string());
  }
  Availability availability(const DeviceInfo& dev) const override {
    const Availability cc =
        lt::cc_gate(dev, 90, 100, "cuBLASLt block-scaled FP8 (VEC128_32F/BLK128x128_32F)");
    if (!cc.ok) return cc;
    Availability first;
    for (const auto& v : kFp8BlockVariants) {
      const Availability a = lt::probe(fp8_block_config(kProbeShape, v));
      if (a.ok) return a;
      if (first.reason.empty()) first = a;
    }
    first.reason += " (and for the other scale assignments and bf16 output)";
    return first;
  }
  std::string shape_error(const Shape& s) const override {
    return lt::lt_shape_error(s, lt::InType::FP8_E4M3, lt::OutType::F16);
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    a_ = DeviceBuffer(size_t(s.l * s.m * s.k));
    b_ = DeviceBuffer(size_t(s.l * s.n * s.k));
    chosen_ = nullptr;
    std::string first_reason;
    for (const auto& v : kFp8BlockVariants) {
      const Fp8BlockScaleLayout la{v.our_a, s.m, s.k}, lb{v.our_b, s.n, s.k};
      a_scale_ = DeviceBuffer(size_t(s.l * la.batch_stride()) * 4);
      b_scale_ = DeviceBuffer(size_t(s.l * lb.batch_stride()) * 4);
      const std::string reason = plan_.prepare(fp8_block_config(s, v), pointers(ops));
      if (reason.empty()) {
        chosen_ = &v;
        fp8_block_scales(ops.a, ops.sfa, la, s.l, a_scale_.get<float>(), stream);
        fp8_block_scales(ops.b, ops.sfb, lb, s.l, b_scale_.get<float>(), stream);
        quantize_fp8_block(ops.a, ops.sfa, la, s.l, a_scale_.get<float>(), a_.get<uint8_t>(),
                           stream);
        quantize_fp8_block(ops.b, ops.sfb, lb, s.l, b_scale_.get<float>(), b_.get<uint8_t>(),
                           stream);
        NVFP4_CUDA_CHECK(cudaStreamSynchronize(stream));
        shape_ = s;
        return;
      }
      if (first_reason.empty()) first_reason = reason;
    }
    throw usage_error(fmt::format("{}: {} (and for the other scale assignments and bf16 output)",
                                  name(), first_reason));
  }
  bool same_numerics() const override { return false; }

 private:
  const Fp8BlockVariant* chosen_ = nullptr;
};

}  // namespace

std::unique_ptr<Gemm> make_f16_predeq_peer() {
  return std::make_unique<Predeq16Peer>(Dequant16::F16);
}
std::unique_ptr<Gemm> make_bf16_predeq_peer() {
  return std::make_unique<Predeq16Peer>(Dequant16::BF16);
}
std::unique_ptr<Gemm> make_fp8_tensor_peer() { return std::make_unique<Fp8TensorPeer>(); }
std::unique_ptr<Gemm> make_fp8_block_peer() { return std::make_unique<Fp8BlockPeer>(); }

}  // namespace nvfp4
