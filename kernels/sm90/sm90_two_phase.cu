// The sm90 kernel's two-phase path (version 4): A and B decoded once to fp16 by the shared
// dequantization kernel (src/problem/dequant; exact, docs/facts.md section 1), then the
// persistent warp-specialised fp16 mainloop of f16_mainloop.cuh. At large M the fused path
// decodes each B tile once per M tile; here every operand byte is decoded exactly once.
#include <cuda_fp16.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "kernels/sm90/f16_mainloop.cuh"
#include "kernels/sm90/sm90_gemm.hpp"
#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/format/nvfp4.hpp"
#include "src/problem/dequant.hpp"

namespace nvfp4::sm90 {
namespace {

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

F16GemmConfig f16_config(const Config& c) {
  F16GemmConfig f;
  f.bm = c.f16_bm;
  f.bn = c.f16_bn;
  f.splits = c.split;
  f.group_m = c.f16_group;
  return f;
}

// Workspace: [fp16 A, L*M*K][fp16 B, L*N*K][the mainloop's split-K partials], 256-byte aligned.
struct Layout {
  size_t a16 = 0, b16 = 0, f16ws = 0, total = 0;
};
Layout layout(const Shape& s, const Config& c) {
  Layout w;
  w.a16 = round_up(size_t(s.l) * size_t(s.m) * size_t(s.k) * sizeof(__half), 256);
  w.b16 = round_up(size_t(s.l) * size_t(s.n) * size_t(s.k) * sizeof(__half), 256);
  w.f16ws = round_up(f16_gemm_workspace_bytes(s.m, s.n, s.k, s.l, f16_config(c)), 256);
  w.total = w.a16 + w.b16 + w.f16ws;
  return w;
}

}  // namespace

Config choose_two_phase_config(const Shape& s, int sms) {
  const F16GemmConfig f = choose_f16_config(s.m, s.n, s.k, s.l, sms);
  Config c;
  c.version = 4;
  c.f16_bm = f.bm;
  c.f16_bn = f.bn;
  c.f16_group = f.group_m;
  c.split = f.splits;
  return normalize(s, c);
}

// The decode pass (both operands, 0.669 us per million elements, 9.07 us per call with the
// launches) plus the mainloop's model (f16_mainloop.cuh, fitted together with it).
double estimate_two_phase_us(const Shape& s, const Config& c, int sms) {
  return 9.0692 + 0.6691 * double(s.l) * double(s.m + s.n) * double(s.k) * 1e-6 +
         f16_mainloop_us(s.m, s.n, s.k, s.l, f16_config(c), sms);
}

size_t two_phase_workspace_bytes(const Shape& s, const Config& c) { return layout(s, c).total; }

namespace {

// The mainloop on fp16 operands; its CUDA errors become the tool's (exit 3).
void mainloop(const Shape& s, const uint16_t* a16, const uint16_t* b16, uint16_t* c,
              const F16GemmConfig& f, void* workspace, cudaStream_t stream) {
  try {
    f16_gemm_launch(reinterpret_cast<const __half*>(a16), reinterpret_cast<const __half*>(b16),
                    reinterpret_cast<__half*>(c), s.m, s.n, s.k, s.l, f, workspace, stream);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw runtime_error(std::string("sm90 fp16 mainloop: ") + e.what());
  }
}

}  // namespace

void launch_two_phase(const Shape& s, const Operands& ops, const Config& c, void* workspace,
                      cudaStream_t stream) {
  const Layout w = layout(s, c);
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  auto* a16 = reinterpret_cast<uint16_t*>(ws);
  auto* b16 = reinterpret_cast<uint16_t*>(ws + w.a16);
  void* f16ws = w.f16ws ? ws + w.a16 + w.b16 : nullptr;
  dequantize_nvfp4(ops.a, ops.sfa, s.l * s.m * (s.k / kBlockSize), Dequant16::F16, a16, stream);
  dequantize_nvfp4(ops.b, ops.sfb, s.l * s.n * (s.k / kBlockSize), Dequant16::F16, b16, stream);
  mainloop(s, a16, b16, ops.c, f16_config(c), f16ws, stream);
}

namespace {

// Peer `sm90-f16-predeq`: the two-phase path's mainloop alone, on operands dequantized before
// timing - the same operands and definition as the f16-predeq peer (cuBLASLt), so the two
// compare the GEMM engines themselves.
class MainloopPeer final : public Gemm {
 public:
  std::string name() const override { return "sm90-f16-predeq"; }
  std::string description() const override {
    return "the sm90 kernel's fp16 mainloop (persistent, warp-specialised, TMA + wgmma) on "
           "operands dequantized before timing: beside f16-predeq, the mainloop against cuBLASLt";
  }
  Role role() const override { return Role::Peer; }
  Availability availability(const DeviceInfo& dev) const override { return sm90::availability(dev); }
  std::string shape_error(const Shape& s) const override { return sm90::shape_error(s); }
  size_t workspace_bytes(const Shape& s) const override {
    return f16_gemm_workspace_bytes(s.m, s.n, s.k, s.l, config(s));
  }
  void prepare(const Shape& s, const Operands& ops, cudaStream_t stream) override {
    a_ = DeviceBuffer(size_t(s.l * s.m * s.k) * 2);
    b_ = DeviceBuffer(size_t(s.l * s.n * s.k) * 2);
    dequantize_nvfp4(ops.a, ops.sfa, s.l * s.m * (s.k / kBlockSize), Dequant16::F16,
                     a_.get<uint16_t>(), stream);
    dequantize_nvfp4(ops.b, ops.sfb, s.l * s.n * (s.k / kBlockSize), Dequant16::F16,
                     b_.get<uint16_t>(), stream);
    config_ = config(s);
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    if (!a_.get()) throw runtime_error(name() + ": run() before prepare()");
    mainloop(s, a_.get<uint16_t>(), b_.get<uint16_t>(), ops.c, config_, workspace, stream);
  }

 private:
  static F16GemmConfig config(const Shape& s) {
    return choose_f16_config(s.m, s.n, s.k, s.l, current_sm_count());
  }
  DeviceBuffer a_, b_;
  F16GemmConfig config_;
};

}  // namespace

}  // namespace nvfp4::sm90

namespace nvfp4 {
std::unique_ptr<Gemm> make_sm90_mainloop_peer() { return std::make_unique<sm90::MainloopPeer>(); }
}  // namespace nvfp4
