#include "kernels/reference/cublaslt_references.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cublaslt_gemm.hpp"
#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/problem/dequant.hpp"

namespace nvfp4 {
namespace {

bool same_shape(const Shape& a, const Shape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.l == b.l;
}

// Shared by the cuBLASLt-backed implementations: prepare() and run() must see one shape.
void check_prepared(const std::string& name, bool prepared, const Shape& prep, const Shape& s) {
  if (!prepared) throw runtime_error(name + ": run() before prepare()");
  if (!same_shape(prep, s))
    throw runtime_error(fmt::format("{}: run() for {}x{}x{} L={} after prepare() for {}x{}x{} L={}",
                                    name, s.m, s.n, s.k, s.l, prep.m, prep.n, prep.k, prep.l));
}

}  // namespace

uint32_t pointer_alignment(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 1;
  while (a < 256 && v % (2 * uintptr_t{a}) == 0) a *= 2;
  return v == 0 ? 256 : a;
}

lt::Config with_pointer_alignment(lt::Config c, const Operands& ops) {
  c.a.min_alignment = std::min(c.a.min_alignment, pointer_alignment(ops.b));
  c.b.min_alignment = std::min(c.b.min_alignment, pointer_alignment(ops.a));
  c.d.min_alignment = std::min(c.d.min_alignment, pointer_alignment(ops.c));
  return c;
}

namespace {

// ---------------------------------------------------------------------------------------------
class CublasLtNvfp4 final : public Gemm {
 public:
  CublasLtNvfp4(Role role, lt::OutType out) : role_(role), out_(out) {}
  std::string name() const override { return "cublaslt-nvfp4"; }
  std::string description() const override {
    return fmt::format(
        "cuBLASLt native NVFP4 GEMM (E2M1, VEC16_UE4M3 blocked scales, FP32 "
        "accumulation, {} output); compute capability 10.0+",
        lt::out_type_name(out_));
  }
  Role role() const override { return role_; }
  Availability availability(const DeviceInfo& dev) const override {
    const Availability cc = lt::cc_gate(dev, 100, 0, "cuBLASLt NVFP4 (block-scaled FP4 GEMM)");
    if (!cc.ok) return cc;
    return lt::probe(lt::make_nvfp4_config(kProbeShape, out_));
  }
  std::string shape_error(const Shape& s) const override {
    return lt::lt_shape_error(s, lt::InType::FP4_E2M1, out_);
  }
  size_t workspace_bytes(const Shape&) const override { return lt::kWorkspaceBytes; }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t) override {
    if (!ops.sfa_blocked || !ops.sfb_blocked)
      throw runtime_error("cublaslt-nvfp4: the blocked scale buffers are missing");
    plan_for(s, ops);
    shape_ = s;
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    check_prepared(name(), plan_.ready(), shape_, s);
    // An algorithm chosen for better-aligned pointers may not run on these: choose again.
    const lt::Config need = with_pointer_alignment(lt::make_nvfp4_config(s, out_), ops);
    const lt::Config& have = plan_.config();
    if (need.a.min_alignment < have.a.min_alignment ||
        need.b.min_alignment < have.b.min_alignment ||
        need.d.min_alignment < have.d.min_alignment)
      plan_for(s, ops);
    plan_.run(pointers(ops), workspace, lt::kWorkspaceBytes, stream);
  }
  int auto_rank() const override { return role_ == Role::Reference ? 3 : 0; }

 private:
  static lt::Pointers pointers(const Operands& ops) {
    return {ops.a, ops.b, ops.sfa_blocked, ops.sfb_blocked, ops.c};
  }
  void plan_for(const Shape& s, const Operands& ops) {
    const std::string reason =
        plan_.prepare(with_pointer_alignment(lt::make_nvfp4_config(s, out_), ops), pointers(ops));
    if (!reason.empty()) throw usage_error(fmt::format("{}: {}", name(), reason));
  }
  Role role_;
  lt::OutType out_;
  lt::Plan plan_;
  Shape shape_;
};

// ---------------------------------------------------------------------------------------------
class CublasLtDequantF16 final : public Gemm {
 public:
  explicit CublasLtDequantF16(Role role) : role_(role) {}
  std::string name() const override {
    return role_ == Role::Reference ? "cublaslt-f16" : "dequant-f16";
  }
  std::string description() const override {
    return "GPU dequantization of A and B to FP16 (exact) + cuBLASLt FP16 GEMM, FP32 "
           "accumulation, fp16 output, both timed; any sm_80+ GPU";
  }
  Role role() const override { return role_; }
  Availability availability(const DeviceInfo& dev) const override {
    const Availability cc = lt::cc_gate(dev, 80, 0, "cuBLASLt FP16 GEMM with FP32 accumulation");
    if (!cc.ok) return cc;
    return lt::probe(config(kProbeShape));
  }
  std::string shape_error(const Shape& s) const override {
    return lt::lt_shape_error(s, lt::InType::F16, lt::OutType::F16);
  }
  size_t workspace_bytes(const Shape&) const override { return lt::kWorkspaceBytes; }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t) override {
    deq_a_ = DeviceBuffer(size_t(s.l * s.m * s.k) * 2);
    deq_b_ = DeviceBuffer(size_t(s.l * s.n * s.k) * 2);
    const std::string reason = plan_.prepare(config(s), pointers(ops));
    if (!reason.empty()) throw usage_error(fmt::format("{}: {}", name(), reason));
    shape_ = s;
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    check_prepared(name(), plan_.ready(), shape_, s);
    dequantize_nvfp4(ops.a, ops.sfa, s.l * s.m * (s.k / kBlockSize), Dequant16::F16,
                     deq_a_.get<uint16_t>(), stream);
    dequantize_nvfp4(ops.b, ops.sfb, s.l * s.n * (s.k / kBlockSize), Dequant16::F16,
                     deq_b_.get<uint16_t>(), stream);
    plan_.run(pointers(ops), workspace, lt::kWorkspaceBytes, stream);
  }
  int auto_rank() const override { return role_ == Role::Reference ? 2 : 0; }

 private:
  static lt::Config config(const Shape& s) {
    return lt::make_config(s, lt::InType::F16, lt::OutType::F16, lt::ScaleMode::None,
                           lt::ScaleMode::None);
  }
  lt::Pointers pointers(const Operands& ops) const {
    return {deq_a_.get(), deq_b_.get(), nullptr, nullptr, ops.c};
  }
  Role role_;
  lt::Plan plan_;
  DeviceBuffer deq_a_, deq_b_;
  Shape shape_;
};

}  // namespace

std::unique_ptr<Gemm> make_cublaslt_nvfp4(Role role, lt::OutType out) {
  return std::make_unique<CublasLtNvfp4>(role, out);
}
std::unique_ptr<Gemm> make_cublaslt_f16(Role role) {
  return std::make_unique<CublasLtDequantF16>(role);
}
std::unique_ptr<Gemm> make_cublaslt_nvfp4_reference() {
  return make_cublaslt_nvfp4(Role::Reference);
}
std::unique_ptr<Gemm> make_cublaslt_nvfp4_peer() { return make_cublaslt_nvfp4(Role::Peer); }
std::unique_ptr<Gemm> make_cublaslt_f16_reference() { return make_cublaslt_f16(Role::Reference); }
std::unique_ptr<Gemm> make_dequant_f16_peer() { return make_cublaslt_f16(Role::Peer); }

}  // namespace nvfp4
