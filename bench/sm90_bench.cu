// Timing harness for the sm90 kernel (development tool, not the official benchmark): for each
// shape, the registered choice (`sm90`), each path forced with its own heuristic (fused v5,
// two-phase v4), with --sweep the fused path's M tiles x splits and with --sweep-2phase the
// two-phase path's tiles x splits (the grids their cost models were fitted to) side by side, plus cuBLASLt FP16 (TN, FP32 accumulation) on same-sized fp16
// operands as the yardstick, and dequantize-then-cuBLASLt end to end (both operands dequantized
// to fp16 by src/problem/dequant, then the same cuBLASLt call).
// Timed by src/measure, as nvfp4bench times kernels: cold (L2 flushed before each sample), the
// median (and min) of --samples samples after 3 warm-up calls.
// With GPU MODE data every partial sum is exact in FP32, so every variant must give the same
// bits as the registered choice: the harness checks that too.
//   usage: sm90_bench [--samples N] [--sweep] [--sweep-2phase] [MxNxK ...]
#include <cublasLt.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/device/device_info.hpp"
#include "src/measure/measure.hpp"
#include "kernels/sm90/f16_mainloop.cuh"
#include "kernels/sm90/sm90_gemm.hpp"
#include "src/problem/problem.hpp"
#include "src/problem/dequant.hpp"

using namespace nvfp4;

namespace {

#define LT_CHECK(x)                                                                    \
  do {                                                                                 \
    cublasStatus_t st_ = (x);                                                          \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "cublasLt error %d at %s\n", int(st_), #x);                 \
      return {-1.0, -1.0};                                                             \
    }                                                                                  \
  } while (0)

__global__ void fill_half(__half* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(float(int((i * 2654435761u) >> 7) % 13 - 6) * 0.5f);
}

// Timing through the tool's own measurement (src/measure): cold mode (L2 flushed and persisting
// lines reset before each sample), a fixed number of samples after 3 warm-up runs, samples at a
// low SM clock dropped; the same code that times kernels and peers in nvfp4bench runs.
struct Timer {
  int samples = 25;
  cudaStream_t stream = nullptr;
  std::unique_ptr<L2Flusher> flusher;
  std::unique_ptr<SmClockReader> clock;
  double default_mhz = 0;
  size_t l2 = 0;

  void init(cudaStream_t s) {
    const DeviceInfo dev = query_device(0);
    stream = s;
    l2 = dev.l2_bytes;
    default_mhz = dev.clock_khz / 1000.0;
    flusher = std::make_unique<L2Flusher>(dev.l2_bytes, 0);
    std::string note;
    clock = make_clock_reader(dev, &note);
  }

  template <class F>
  std::pair<double, double> time(F&& f, cudaStream_t) {  // median, min (us)
    MeasureOptions opt;
    opt.mode = MeasureMode::Cold;
    opt.iters = samples;
    opt.warmup = 3;
    opt.warmup_s = 0;
    DeviceTimer t{stream, flusher.get(), clock.get(), default_mhz, l2};
    const Measurement m = measure_device([&](cudaStream_t, int) { f(); }, 1, 0, opt, t);
    return {m.stats.median, m.stats.min};
  }
};

// cuBLASLt FP16 alone (first) and dequantize-then-cuBLASLt on the real operands (second).
std::pair<double, double> cublas_fp16_us(const Shape& s, const DeviceTensors& dt, Timer& tm,
                                         cudaStream_t stream) {
  DeviceBuffer a(size_t(s.m * s.k) * 2), b(size_t(s.n * s.k) * 2), c(size_t(s.m * s.n) * 2);
  DeviceBuffer ws(size_t(32) << 20);
  fill_half<<<1024, 256, 0, stream>>>(a.get<__half>(), s.m * s.k);
  fill_half<<<1024, 256, 0, stream>>>(b.get<__half>(), s.n * s.k);
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Row-major C[M,N] = A[M,K] B[N,K]^T  ==  column-major C^T[N,M] = B^T' ... : cuBLAS "A" is
  // our B (K x N column-major, transposed), cuBLAS "B" is our A (K x M column-major).
  cublasLtMatrixLayout_t la, lb, lc;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, s.k, s.n, s.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, s.k, s.m, s.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, s.n, s.m, s.n));
  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t wsb = ws.bytes();
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &wsb, sizeof wsb));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found));
  if (found == 0) return {-1.0, -1.0};
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  auto run = [&] {
    last = cublasLtMatmul(lt, op, &alpha, b.get(), la, a.get(), lb, &beta, c.get(), lc, c.get(),
                          lc, &res.algo, ws.get(), wsb, stream);
  };
  const auto t = tm.time(run, stream);
  LT_CHECK(last);
  const Operands ops = dt.view();
  auto e2e = [&] {
    dequantize_nvfp4(ops.a, ops.sfa, s.m * s.k / 16, Dequant16::F16, a.get<uint16_t>(), stream);
    dequantize_nvfp4(ops.b, ops.sfb, s.n * s.k / 16, Dequant16::F16, b.get<uint16_t>(), stream);
    run();
  };
  const auto t2 = tm.time(e2e, stream);
  LT_CHECK(last);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  return {t.first, t2.first};
}

bool parse_shape(const char* s, Shape& out) {
  long long m, n, k;
  if (std::sscanf(s, "%lldx%lldx%lld", &m, &n, &k) != 3) return false;
  out = Shape{m, n, k, 1};
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Timer tm;
  bool sweep = false, sweep2 = false;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    Shape s;
    if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) tm.samples = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep")) sweep = true;
    else if (!std::strcmp(argv[i], "--sweep-2phase")) sweep2 = true;
    else if (parse_shape(argv[i], s)) shapes.push_back(s);
    else { std::fprintf(stderr, "bad argument %s\n", argv[i]); return 2; }
  }
  if (shapes.empty())
    shapes = {{128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1},
              {1024, 7168, 16384, 1}, {4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}};
  cudaDeviceProp prop{};
  NVFP4_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs, samples %d (median, L2 flushed)\n", prop.name, sms, tm.samples);
  Stream stream;
  tm.init(stream.get());
  for (const Shape& s : shapes) {
    DeviceTensors dt;
    dt.allocate(s);
    generate_device(Problem{s, Dist::GpuMode, 1}, dt, stream.get());
    // [0] the registered choice, [1] the fused path forced, [2] the two-phase path forced
    std::vector<std::pair<std::string, sm90::Config>> variants{
        {"auto", sm90::choose_config(s, sms)},
        {"fused", sm90::choose_config(s, sms, sm90::Path::Fused)},
        {"2phase", sm90::choose_config(s, sms, sm90::Path::TwoPhase)}};
    auto same = [](const sm90::Config& a, const sm90::Config& b) {
      return a.version == b.version && a.split == b.split &&
             (a.version == 4 ? a.f16_bm == b.f16_bm && a.f16_bn == b.f16_bn && a.f16_group == b.f16_group
                             : a.mt == b.mt);
    };
    if (sweep) {  // the fused path's candidates (sm90_gemm.cu, choose_fused_config)
      int cover = 16;
      while (cover < 256 && cover < s.m) cover *= 2;
      for (int mt : {16, 32, 64, 128, 256}) {
        if (mt != cover && 2 * mt != cover && !(mt == 256 && s.m > 128)) continue;
        for (int sp : {1, 2, 3, 4, 5, 6, 8, 12, 16}) {
          sm90::Config c;
          c.version = 5;
          c.mt = mt;
          c.split = sp;
          c = sm90::normalize(s, c);
          bool dup = c.split != sp || sm90::workspace_bytes(s, c) > (size_t(2) << 30);
          for (const auto& v : variants) dup = dup || same(v.second, c);
          if (!dup) variants.emplace_back("", c);
        }
      }
    }
    if (sweep2) {  // the two-phase path's candidates (f16_mainloop.cuh, f16_candidates)
      for (const sm90::F16GemmConfig& f : sm90::f16_candidates(s.m, s.k)) {
        sm90::Config c;
        c.version = 4;
        c.f16_bm = f.bm;
        c.f16_bn = f.bn;
        c.f16_group = f.group_m;
        c.split = f.splits;
        c = sm90::normalize(s, c);
        bool dup = c.split != f.splits || sm90::workspace_bytes(s, c) > (size_t(3) << 30);
        for (const auto& v : variants) dup = dup || same(v.second, c);
        if (!dup) variants.emplace_back("", c);
      }
    }
    const auto [cub, e2e] = cublas_fp16_us(s, dt, tm, stream.get());
    std::printf("shape %lldx%lldx%lld  cuBLASLt fp16: %.1f us (%.0f TFLOP/s)  dequant+cuBLASLt: %.1f us\n",
                (long long)s.m, (long long)s.n, (long long)s.k, cub, s.flops() / cub * 1e-6, e2e);
    std::vector<uint16_t> ref(size_t(s.m * s.n)), got(ref.size());
    for (size_t v = 0; v < variants.size(); ++v) {
      const sm90::Config c = variants[v].second;
      DeviceBuffer ws(sm90::workspace_bytes(s, c));
      const Operands ops = dt.view();
      poison_device(dt.c.get<uint16_t>(), s.m * s.n, stream.get());
      auto run = [&] { sm90::launch(s, ops, c, ws.get(), stream.get()); };
      const auto t = tm.time(run, stream.get());
      stream.sync();
      NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), dt.c.get(), got.size() * 2, cudaMemcpyDeviceToHost));
      if (v == 0) ref = got;
      int64_t diff = 0;
      for (size_t i = 0; i < got.size(); ++i) diff += got[i] != ref[i] || got[i] == kPoisonFp16;
      std::printf("  %-6s %-28s %8.1f us  min %8.1f  %6.0f TFLOP/s  x%.2f vs cuBLAS  x%.2f vs deq+cuBLAS%s\n",
                  variants[v].first.c_str(), sm90::describe(c).c_str(), t.first, t.second,
                  s.flops() / t.first * 1e-6, cub / t.first, e2e / t.first,
                  diff ? (" MISMATCH " + std::to_string(diff)).c_str() : "");
    }
    std::fflush(stdout);
  }
  return 0;
}
