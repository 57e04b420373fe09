// The sm90 launcher (launch.hpp): the per-device state, and launch(), which checks a call's
// operands and replays a repeated call as one CUDA graph (launch_graphs.hpp says which) or else
// enqueues its launches directly.
#include "kernels/sm90/launch.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/sm_count.hpp"

namespace nvfp4::sm90 {

DeviceState::DeviceState(int device) : device_(device) {
  const int sms = device >= 0 ? device_sm_count(device) : 0;
  if (sms > 0) sm_count_ = sms;
}

void DeviceState::ensure_smem_limit(const void* kernel, size_t bytes) {
  if (std::find(raised_.begin(), raised_.end(), kernel) != raised_.end()) return;
  const RelaxedCaptureMode relaxed;
  NVFP4_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  raised_.push_back(kernel);
}

DeviceState& PerDevice::current() {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    dev = -1;
  }
  auto it = states_.find(dev);
  if (it == states_.end()) it = states_.emplace(dev, DeviceState(dev)).first;
  return it->second;
}

OwnStream::~OwnStream() {
  if (s_) (void)cudaStreamDestroy(s_);
}

cudaStream_t OwnStream::get() {
  if (!s_) NVFP4_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  return s_;
}

namespace {

// The launches of one call, enqueued on `stream`.
void launch_direct(const Shape& s, const Operands& ops, const Config& c, void* workspace, cudaStream_t stream,
                   DeviceState& dev) {
  if (c.path == Path::TwoPhase) return launch_two_phase(s, ops, c.two_phase, workspace, stream, dev);
  if (c.path == Path::Stream) return launch_stream(s, ops, c.stream, workspace, stream, dev);
  if (c.path != Path::Fused)
    throw usage_error("sm90: a launch configuration names the fused, the two-phase or the stream path");
  launch_fused(s, ops, c.fused, workspace, stream, dev);
}

// The same launches captured on the launcher's own stream into an instantiated graph; nullopt
// when the runtime refuses the capture or the instantiation (the caller then launches directly,
// which reports any error that is not the capture's).
std::optional<GraphExec> capture(const Shape& s, const Operands& ops, const Config& c, void* workspace,
                                 DeviceState& dev) {
  try {
    cudaStream_t cap = nullptr;
    {
      const RelaxedCaptureMode relaxed;
      cap = dev.capture_stream.get();
    }
    GraphExec g;
    g.capture(cap, [&] { launch_direct(s, ops, c, workspace, cap, dev); }, "sm90");
    return g;
  } catch (const Error&) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
}

}  // namespace

void launch(const Shape& s, const Operands& ops, const Config& c0, void* workspace,
            cudaStream_t stream, DeviceState& dev) {
  const Config c = normalize(s, c0);
  auto misaligned = [](const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a != 0; };
  if (misaligned(ops.a, 16) || misaligned(ops.b, 16) || misaligned(ops.sfa, 4) ||
      misaligned(ops.sfb, 4) || misaligned(ops.c, 16))
    throw runtime_error("sm90: A and B must be 16-byte aligned, scales 4-byte, C 16-byte");
  if (workspace == nullptr || misaligned(workspace, 256))
    throw runtime_error("sm90: needs a 256-byte aligned workspace (decoded operands)");
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  NVFP4_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return launch_direct(s, ops, c, workspace, stream, dev);
  const LaunchKey key = LaunchKey::of(s, c, ops.a, ops.b, ops.sfa, ops.sfb, ops.c, workspace);
  GraphExec* g = dev.graphs.find(key);
  if (g == nullptr) {
    if (!dev.graphs.should_build(key)) return launch_direct(s, ops, c, workspace, stream, dev);
    std::optional<GraphExec> built = capture(s, ops, c, workspace, dev);
    if (!built) {
      dev.graphs.refuse(key);
      return launch_direct(s, ops, c, workspace, stream, dev);
    }
    g = &dev.graphs.add(key, std::move(*built));
  }
  g->launch(stream);
}

}  // namespace nvfp4::sm90
