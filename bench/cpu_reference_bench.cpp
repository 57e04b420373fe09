// Times the exact CPU reference on a full problem (default: the largest GPU MODE benchmark shape).
// Usage: bench_cpu_reference [M N K L] ; prints seconds per full check and the thread count.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "src/core/parallel.hpp"
#include "src/problem/problem.hpp"
#include "kernels/reference/cpu_exact.hpp"

int main(int argc, char** argv) {
  using namespace nvfp4;
  Shape s{128, 7168, 16384, 1};
  if (argc == 5) s = {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4])};
  validate_shape(s);
  HostTensors t;
  t.allocate(s);
  generate_host({s, Dist::GpuMode, 1}, t);
  Operands ops = t.view();
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    exact_gemm(s, ops);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("full exact check %lldx%lldx%lld L=%lld: %.3f s (%u threads)\n", (long long)s.m,
                (long long)s.n, (long long)s.k, (long long)s.l, sec, host_threads());
    best = sec < best ? sec : best;
  }
  std::printf("best %.3f s\n", best);
  return 0;
}
