// `sm90`: NVFP4 GEMM for Hopper (sm_90a) - the Gemm objects. The registered kernel takes, per
// shape, the streaming path (stream.cu) at small M (heuristics.hpp, stream_chosen), else the
// fused path (fused.cu) or the two-phase path (two_phase.cu), whichever its cost
// models (heuristics.cpp) say is faster, or the configuration set by set_configuration
// (--kernel-config). `sm90-fused` and `sm90-2phase` are the same kernel held to one path.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "kernels/sm90/heuristics.hpp"
#include "kernels/sm90/launch.hpp"

namespace nvfp4::sm90 {

Availability availability(const DeviceInfo& dev) {
  if (!dev.has_gpu) return {false, "no CUDA device: " + dev.no_gpu_reason};
  if (dev.cc_major != 9 || dev.cc_minor != 0)
    return {false, fmt::format("needs compute capability 9.0 (sm_90a wgmma); {} has {}", dev.name,
                               dev.cc_string())};
  return {true, {}};
}

namespace {

bool same_shape(const Shape& a, const Shape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.l == b.l;
}

class Sm90Gemm final : public Gemm {
 public:
  explicit Sm90Gemm(Path path) : path_(path) {}
  std::string name() const override {
    return path_ == Path::Fused ? "sm90-fused" : path_ == Path::TwoPhase ? "sm90-2phase" : "sm90";
  }
  std::string description() const override {
    const std::string fused =
        "fused: E2M1 decoded exactly to fp16 with the block scale applied, A once per problem by "
        "a prepass; two producer warps bring raw B and its scales (TMA, 4 K blocks a stage) and "
        "fp16 A into rings of their own, two consumer warpgroups decode B from shared memory into "
        "wgmma register fragments (C^T = B A^T) for the next K block while wgmma runs; persistent "
        "CTAs, deterministic split-K or stream-K";
    const std::string two =
        "two-phase: A and B decoded once to fp16, then a persistent warp-specialised fp16 "
        "mainloop (TMA ring, producer warp, two consumer warpgroups, wgmma), split-K reduced in "
        "the kernel";
    const std::string stream =
        "stream (M <= 32, taken at small M): one cooperative launch, no prepass, no B ring; each warp streams "
        "its own share of (16-row B panel, 256 K) units from global memory into registers, decodes them into "
        "mma.sync fragments against A decoded in the kernel into a per-CTA shared slab; partials summed in "
        "shared memory per CTA, then across CTAs in a fixed order";
    const std::string replay = "; a call repeated on the same buffers is replayed as one CUDA graph";
    if (path_ == Path::Fused) return "Hopper sm_90a, the fused path only (" + fused + ")" + replay;
    if (path_ == Path::TwoPhase) return "Hopper sm_90a, the two-phase path only (" + two + ")" + replay;
    return "Hopper sm_90a, per shape the faster of two paths by their cost models - " + fused + "; " + two +
           "; or at small M " + stream + "; FP32 accumulation" + replay;
  }
  std::string configuration(const Shape& s) const override { return describe(config_for(s)); }
  std::vector<std::string> configurations(const Shape& s) const override {
    std::vector<std::string> out;
    if (!sm90::shape_error(s).empty()) return out;
    for (const Config& c : sm90::configurations(s, path_, devices_.current().sm_count())) out.push_back(describe(c));
    return out;
  }
  std::string set_configuration(const std::string& text, const Shape& s) override {
    if (text.empty()) {
      pinned_.reset();
      return {};
    }
    if (const std::string e = sm90::shape_error(s); !e.empty()) return "the shape is not supported: " + e;
    Config c;
    if (std::string e = parse_config(text, &c); !e.empty()) return e;
    if (std::string e = configuration_error(s, path_, c, devices_.current().sm_count()); !e.empty()) return e;
    pinned_ = Pinned{s, c};
    prepared_ = false;
    return {};
  }
  Availability availability(const DeviceInfo& dev) const override { return sm90::availability(dev); }
  std::string shape_error(const Shape& s) const override { return sm90::shape_error(s); }
  size_t workspace_bytes(const Shape& s) const override { return sm90::workspace_bytes(s, config_for(s)); }
  void prepare(const Shape& s, const Operands&, cudaStream_t) override {
    config_ = config_for(s);
    prepared_for_ = s;
    prepared_ = true;
  }
  void run(const Shape& s, const Operands& ops, void* workspace, cudaStream_t stream) override {
    const Config c = prepared_ && same_shape(prepared_for_, s) ? config_ : config_for(s);
    launch(s, ops, c, workspace, stream, devices_.current());
  }
  // --kernel auto takes the per-shape choice; the forced paths are for comparisons.
  int auto_rank() const override { return path_ == Path::Auto ? 10 : 0; }

 private:
  struct Pinned {
    Shape shape;
    Config config;
  };
  // The configuration set for this shape, else the heuristics' choice on the current device.
  Config config_for(const Shape& s) const {
    if (pinned_ && same_shape(pinned_->shape, s)) return pinned_->config;
    return choose_config(s, devices_.current().sm_count(), path_);
  }

  Path path_;
  std::optional<Pinned> pinned_;
  Config config_;
  Shape prepared_for_;
  bool prepared_ = false;
  mutable PerDevice devices_;  // SM count and shared-memory limits, per device
};

}  // namespace
}  // namespace nvfp4::sm90

namespace nvfp4 {
std::unique_ptr<Gemm> make_sm90_gemm() { return std::make_unique<sm90::Sm90Gemm>(sm90::Path::Auto); }
std::unique_ptr<Gemm> make_sm90_fused_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::Fused);
}
std::unique_ptr<Gemm> make_sm90_two_phase_gemm() {
  return std::make_unique<sm90::Sm90Gemm>(sm90::Path::TwoPhase);
}
}  // namespace nvfp4
