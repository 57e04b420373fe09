// Timing: warm-up, then samples of one call each, L2 flushed before each sample (cold).
// Device work is timed with CUDA events, host work with a steady clock.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "device/buffer.hpp"
#include "measure/stats.hpp"

namespace nvfp4 {

struct MeasureOptions {
  int warmup = 3;
  int iters = 20;
  bool flush_l2 = true;
};

struct Measurement {
  std::string timer;  // "cuda-events" or "host-steady-clock"
  bool l2_flushed = false;
  std::vector<double> samples_us;
  Stats stats;  // over samples_us
};

// Writes a buffer of twice the L2 size before each cold sample so no operand stays cached.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  void flush(cudaStream_t stream);
  size_t bytes() const { return buf_.bytes(); }

 private:
  DeviceBuffer buf_;
};

Measurement measure_device(const std::function<void(cudaStream_t)>& fn,
                           const MeasureOptions& opt, cudaStream_t stream, L2Flusher* flusher);
Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt);

}  // namespace nvfp4
