// One instantiated CUDA graph: the launches a callback enqueues on a stream, captured once and
// replayed as one cudaGraphLaunch. The tool's graph timing mode and the sm90 launcher's replay of
// a repeated call (kernels/sm90/launch_graphs.hpp) both capture through it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace nvfp4 {

// This thread's stream-capture interaction mode set to relaxed for a scope, then restored:
// another thread's capture in Global mode would otherwise forbid this thread's "potentially
// unsafe" calls (cudaFuncSetAttribute, cudaStreamCreate, cudaGraphInstantiate), none of which
// touches a stream being captured. Never held while a capture records, so that an unsafe call
// among the captured launches still fails the capture instead of escaping it.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool swapped_ = false;
};

class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(GraphExec&& o) noexcept : exec_(o.exec_) { o.exec_ = nullptr; }
  GraphExec& operator=(GraphExec&& o) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec();  // errors ignored: at process exit the runtime may already be gone

  // Captures what `record` enqueues on `stream` (thread-local capture mode) and instantiates it
  // (under RelaxedCaptureMode), replacing any graph held before. The capture is ended even when
  // `record` throws, and the exception goes on. A capture the runtime ends with an error throws
  // nvfp4::Error "<who>: the work cannot be captured in a CUDA graph (<the runtime's reason>)";
  // other failures (beginning the capture, instantiating) throw the call's CUDA error.
  void capture(cudaStream_t stream, const std::function<void()>& record, const std::string& who = "CUDA graph");
  // Enqueues the captured launches on `stream`.
  void launch(cudaStream_t stream) const;
  bool empty() const { return exec_ == nullptr; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace nvfp4
