// A minimal parallel-for over [0, n) on all hardware threads (host kernel, CPU reference).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace nvfp4 {

inline unsigned host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Calls fn(i) for every i in [0, n), handing out indices dynamically; rethrows the first error.
template <class Fn>
void parallel_for(int64_t n, Fn&& fn) {
  const unsigned t = static_cast<unsigned>(std::min<int64_t>(host_threads(), std::max<int64_t>(n, 1)));
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto worker = [&] {
    try {
      for (int64_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) fn(i);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < t; ++w) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace nvfp4
