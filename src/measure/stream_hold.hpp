// Holds a stream while a sample's work is enqueued, as nvbench does: a one-thread kernel spins
// on a flag in mapped host memory until the host has enqueued the whole sample, so the timed
// window between the events holds GPU work only, never the host's enqueue time. It gives up
// after a timeout (a run() that waits for the GPU would otherwise wait for itself) and says so.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nvfp4 {

class StreamHold {
 public:
  explicit StreamHold(uint64_t timeout_ns = 500'000'000);
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  // Enqueues the spinning kernel on `stream`; the previous hold must have ended (synchronized).
  void hold(cudaStream_t stream);
  // Lets the held stream go on.
  void release();
  // After the stream has synchronized: whether the last hold ended by its timeout.
  bool timed_out() const;

 private:
  volatile int* flags_ = nullptr;  // [0] release, [1] timed out; mapped pinned memory
  int* device_flags_ = nullptr;
  uint64_t timeout_ns_;
};

}  // namespace nvfp4
