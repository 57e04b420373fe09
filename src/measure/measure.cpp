#include "measure/measure.hpp"

#include <chrono>

namespace nvfp4 {

L2Flusher::L2Flusher(size_t l2_bytes) : buf_(2 * (l2_bytes ? l2_bytes : (64u << 20))) {}

void L2Flusher::flush(cudaStream_t stream) {
  NVFP4_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, buf_.bytes(), stream));
}

Measurement measure_device(const std::function<void(cudaStream_t)>& fn, const MeasureOptions& opt,
                           cudaStream_t stream, L2Flusher* flusher) {
  Measurement m;
  m.timer = "cuda-events";
  m.l2_flushed = opt.flush_l2 && flusher;
  for (int w = 0; w < opt.warmup; ++w) fn(stream);
  NVFP4_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start, stop;
  for (int it = 0; it < opt.iters; ++it) {
    if (m.l2_flushed) flusher->flush(stream);
    NVFP4_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    fn(stream);
    NVFP4_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    NVFP4_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    NVFP4_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    m.samples_us.push_back(double(ms) * 1e3);
  }
  m.stats = summarize(m.samples_us);
  return m;
}

Measurement measure_host(const std::function<void()>& fn, const MeasureOptions& opt) {
  Measurement m;
  m.timer = "host-steady-clock";
  for (int w = 0; w < opt.warmup; ++w) fn();
  for (int it = 0; it < opt.iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    m.samples_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  m.stats = summarize(m.samples_us);
  return m;
}

}  // namespace nvfp4
