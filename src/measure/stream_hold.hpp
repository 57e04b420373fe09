// Holds a stream while a sample's work is enqueued, as nvbench does, so the timed window between
// the events holds GPU work only, never the host's enqueue time; and owns the GPU meanwhile, so
// no other stream can do the sample's work before the window opens (docs/cli.md, "The
// verdict"): the hold kernel fills every SM (as many 1024-thread CTAs as the SMs hold threads),
// thread 0 of CTA 0 spins on a flag in mapped host memory until the host has enqueued the whole
// sample, then releases the others. What it sees is kept for the verdict: whether it timed out
// (a run() that waits on the host for device work), how far apart its CTAs started (another
// kernel still on the SMs), and the longest pause in the device's timer while it spun (the
// context time-sliced with another).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nvfp4 {

class StreamHold {
 public:
  explicit StreamHold(int device_ordinal, uint64_t timeout_ns = 100'000'000);
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  // Enqueues the hold on `stream`; the previous hold must have ended (synchronized).
  void hold(cudaStream_t stream);
  // Lets the held stream go on.
  void release();
  // After the stream has synchronized, of the last hold: whether it ended by its timeout, the
  // latest CTA start after the earliest, and the longest gap between two reads of the timer.
  bool timed_out() const;
  double start_skew_us() const;
  double max_gap_us() const;
  double timeout_ms() const { return double(timeout_ns_) * 1e-6; }

  struct Shared;  // mapped host memory, written by the kernel (stream_hold.cu)

 private:
  Shared* shared_ = nullptr;
  Shared* device_shared_ = nullptr;
  unsigned long long* starts_ = nullptr;  // device: each CTA's start
  unsigned* arrived_ = nullptr;           // device: CTAs started, over every hold so far
  unsigned* go_ = nullptr;                // device: the last hold released
  unsigned holds_ = 0;
  int grid_ = 1;
  uint64_t timeout_ns_;
};

}  // namespace nvfp4
