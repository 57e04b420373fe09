#include "src/device/graph.hpp"

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"

namespace nvfp4 {

RelaxedCaptureMode::RelaxedCaptureMode() {
  swapped_ = cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess;
}

RelaxedCaptureMode::~RelaxedCaptureMode() {
  if (swapped_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
}

GraphExec& GraphExec::operator=(GraphExec&& o) noexcept {
  if (this != &o) {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = o.exec_;
    o.exec_ = nullptr;
  }
  return *this;
}

GraphExec::~GraphExec() {
  if (exec_) (void)cudaGraphExecDestroy(exec_);
}

void GraphExec::capture(cudaStream_t stream, const std::function<void()>& record, const std::string& who) {
  NVFP4_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    record();
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    throw;
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  if (end != cudaSuccess || graph == nullptr) {
    if (graph) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    throw runtime_error(fmt::format("{}: the work cannot be captured in a CUDA graph ({})", who,
                                    cudaGetErrorString(end)));
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst;
  {
    const RelaxedCaptureMode relaxed;
    inst = cudaGraphInstantiate(&exec, graph, 0);
  }
  (void)cudaGraphDestroy(graph);  // the instantiated graph does not need its template
  NVFP4_CUDA_CHECK(inst);
  if (exec_) (void)cudaGraphExecDestroy(exec_);
  exec_ = exec;
}

void GraphExec::launch(cudaStream_t stream) const { NVFP4_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

}  // namespace nvfp4
