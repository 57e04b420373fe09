// The sm90 kernel's two-phase path: A and B decoded once to fp16 by the shared dequantization
// kernel (src/problem/dequant; exact, docs/facts.md section 1), then the persistent
// warp-specialised fp16 mainloop (mainloop.cu). At large M the fused path decodes each B tile
// once per M tile; here every operand byte is decoded exactly once. Also the peer
// `sm90-f16-predeq`: the mainloop alone.
#include <cuda_fp16.h>

#include <memory>

#include "kernels/sm90/heuristics.hpp"
#include "kernels/sm90/launch.hpp"
#include "src/core/error.hpp"
#include "src/device/buffer.hpp"
#include "src/format/nvfp4.hpp"
#include "src/problem/dequant.hpp"

namespace nvfp4::sm90 {

void launch_two_phase(const Shape& s, const Operands& ops, const TwoPhaseConfig& c, void* workspace,
                      cudaStream_t stream, DeviceState& dev) {
  const TwoPhaseLayout w = two_phase_layout(s, c);
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  auto* a16 = reinterpret_cast<uint16_t*>(ws);
  auto* b16 = reinterpret_cast<uint16_t*>(ws + w.a16);
  void* mainloop_ws = w.mainloop ? ws + w.a16 + w.b16 : nullptr;
  dequantize_nvfp4(ops.a, ops.sfa, s.l * s.m * (s.k / kBlockSize), Dequant16::F16, a16, stream);
  dequantize_nvfp4(ops.b, ops.sfb, s.l * s.n * (s.k / kBlockSize), Dequant16::F16, b16, stream);
  launch_mainloop(s, a16, b16, ops.c, c, mainloop_ws, stream, dev);
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
    return mainloop_workspace_bytes(s, config(s));
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
    launch_mainloop(s, a_.get<uint16_t>(), b_.get<uint16_t>(), ops.c, config_, workspace, stream,
                    devices_.current());
  }

 private:
  // The mainloop's own pick: the two-phase chooser's tile, split and group.
  TwoPhaseConfig config(const Shape& s) const { return choose_two_phase(s, devices_.current().sm_count()); }
  DeviceBuffer a_, b_;
  TwoPhaseConfig config_;
  mutable PerDevice devices_;
};

}  // namespace
}  // namespace nvfp4::sm90

namespace nvfp4 {
std::unique_ptr<Gemm> make_sm90_mainloop_peer() { return std::make_unique<sm90::MainloopPeer>(); }
}  // namespace nvfp4
