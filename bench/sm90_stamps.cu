// The fused or the streaming kernel's time line on one problem (docs/kernels.md, "Stamps"):
// where each CTA's time goes, which ncu's whole-kernel averages do not separate. Fused: the wait
// for the A prepass, each unit's fill, K loop, split-K hand-over or sum, and epilogue. Streaming:
// the A slab, the loop, the pieces its warps share, the grid barrier's wait and the final sums.
//
//   sm90_stamps M N K L "CONFIG" [--units U] [--seed S] [--calls N] [--mode cold|hot] [--per-cta FILE]
//
// CONFIG is a configuration as --kernel-config spells it ("fused 128x128 split 2", or the
// streaming path's --list-configs line, "stream 16x16 ctas 132 warps 16"), or "auto" for the
// fused chooser's pick. Fresh random operands (gpumode distribution), the output poisoned and
// checked on 4096 sampled elements against the exact reference; N calls (default 3), each after
// an L2 flush (cold; --mode hot: no flush, so the operands the last call read stay in L2 where
// they fit), launched directly (never a graph replay): the spans of all, the stamps of the last.
// The fused SM clock comes from the stamps themselves (clock64 against %globaltimer per CTA);
// --units is the fused time line's; --per-cta FILE writes a CSV line per CTA for either.
// Exit codes: 0 the output verified, 1 it did not, 2 bad arguments, 3 a failure on the way, 4 no
// sm_90 GPU.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/reference/cpu_exact.hpp"
#include "kernels/sm90/config.hpp"
#include "kernels/sm90/heuristics.hpp"
#include "kernels/sm90/launch.hpp"
#include "kernels/sm90/stamps.hpp"
#include "src/device/buffer.hpp"
#include "src/device/device_info.hpp"
#include "src/measure/measure.hpp"
#include "src/problem/problem.hpp"
#include "src/verify/verify.hpp"

using namespace nvfp4;

namespace {

int usage(const char* why) {
  std::fprintf(stderr, "sm90_stamps: %s\nusage: sm90_stamps M N K L \"CONFIG\"|auto [--units U] [--seed S] [--calls N] [--mode cold|hot] [--per-cta FILE]\n", why);
  return 2;
}

// --per-cta FILE: `text` into a new file (never one that exists).
void write_new_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wx");
  if (f == nullptr) throw std::runtime_error("--per-cta " + path + ": cannot create (does it exist?)");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("--per-cta " + path + ": write failed");
}

int64_t check_sampled(const Shape& s, DeviceTensors& dt, uint64_t seed, int64_t* checked) {
  std::vector<uint16_t> got(size_t(s.l * s.m * s.n));
  NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), dt.c.get(), got.size() * 2, cudaMemcpyDeviceToHost));
  HostTensors h;
  h.allocate(s);
  copy_inputs_to_host(dt, h);
  const Operands hv = h.view();
  Verifier check(Tolerance{}, "sampled");  // the tool's rule (src/verify/verify.hpp)
  for (const Coord& at : sample_coords(s, 4096, seed + 1))
    check.check(at, got[size_t((at.batch * s.m + at.i) * s.n + at.j)],
                exact_element_fp16(s, hv, at.batch, at.i, at.j));
  *checked = check.result().checked;
  return check.result().mismatches;
}

// One problem's buffers, a device state and a stamps buffer of `words` words; call() runs one
// call the same way for both kernels: C poisoned, the stamps zeroed, L2 flushed (unless hot),
// `launch`, waited.
struct Harness {
  Stream stream;
  DeviceTensors dt;
  DeviceBuffer ws;
  sm90::DeviceState dev{0};
  DeviceBuffer stamps;
  size_t words;
  L2Flusher flusher;
  bool hot;
  Harness(const Shape& s, const sm90::Config& cfg, uint64_t seed, const DeviceInfo& info, size_t stamp_words, bool hot_)
      : ws(sm90::workspace_bytes(s, cfg)), stamps(stamp_words * sizeof(uint64_t)), words(stamp_words),
        flusher(info.l2_bytes, 0), hot(hot_) {
    dt.allocate(s);
    generate_device(Problem{s, Dist::GpuMode, seed}, dt, stream.get());
  }
  template <class Launch>
  void call(const Shape& s, Launch launch) {
    poison_device(dt.c.get<uint16_t>(), s.l * s.m * s.n, stream.get());
    NVFP4_CUDA_CHECK(cudaMemsetAsync(stamps.get(), 0, words * sizeof(uint64_t), stream.get()));
    if (!hot) flusher.flush(stream.get());
    launch();
    stream.sync();
  }
  // the first `n` words of the stamps, as the last call left them
  std::vector<uint64_t> read(size_t n) const {
    std::vector<uint64_t> host(n);
    NVFP4_CUDA_CHECK(cudaMemcpy(host.data(), stamps.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    return host;
  }
};

// The spans' line: each call's first CTA start to last CTA end, us.
void print_spans(int calls, bool hot, std::vector<double> spans) {
  std::sort(spans.begin(), spans.end());
  std::printf("calls     %d %s: kernel span median %.2f us (%.2f-%.2f); the last call's stamps:\n", calls,
              hot ? "hot (no L2 flush)" : "cold", spans[spans.size() / 2], spans.front(), spans.back());
}

// The streaming path's time line (StreamStampLayout): its phases per CTA and when the grid's
// CTAs reach each boundary, for the last of `calls` calls.
int run_stream(const Shape& s, const sm90::Config& cfg, int calls, bool hot, uint64_t seed, const DeviceInfo& info,
               const std::string& per_cta) {
  if (const std::string e = sm90::stream_shape_error(s, cfg.stream); !e.empty()) return usage(("CONFIG: " + e).c_str());
  const int ctas = cfg.stream.ctas;
  Harness h(s, cfg, seed, info, sm90::StreamStampLayout::words(ctas), hot);
  h.dev.stream_stamps = {h.stamps.get<uint64_t>(), ctas, 0};
  sm90::StreamStampSummary sum;  // the last call's
  std::vector<double> spans;
  for (int call = 0; call < calls; ++call) {
    h.call(s, [&] { sm90::launch_stream(s, h.dt.view(), cfg.stream, h.ws.get(), h.stream.get(), h.dev); });
    sum = sm90::summarize_stream_stamps(h.read(h.words), ctas);
    spans.push_back(sum.span_ns / 1e3);
  }
  int64_t checked = 0;
  const int64_t bad = check_sampled(s, h.dt, seed, &checked);
  std::printf("problem   %lldx%lldx%lld L=%lld, %s, grid %d\n", (long long)s.m, (long long)s.n, (long long)s.k,
              (long long)s.l, sm90::describe(cfg).c_str(), h.dev.stream_stamps.grid);
  std::printf("verify    %s (%lld sampled elements, %lld wrong)\n", bad ? "FAILED" : "PASSED", (long long)checked,
              (long long)bad);
  print_spans(calls, h.hot, spans);
  std::printf("%s", sm90::format_stream_stamps(sum).c_str());
  if (!per_cta.empty()) write_new_file(per_cta, sm90::format_stream_stamps_per_cta(sum));
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 6) return usage("five arguments are needed");
  Shape s;
  s.m = std::atoll(argv[1]);
  s.n = std::atoll(argv[2]);
  s.k = std::atoll(argv[3]);
  s.l = std::atoll(argv[4]);
  const std::string spelling = argv[5];
  int units = 64;
  int calls = 3;  // --calls N: the last one's stamps are summarized, every one's span
  bool hot = false;  // --mode hot: no L2 flush before a call
  uint64_t seed = 0;
  std::string per_cta;  // --per-cta FILE: one CSV line per CTA (format_stamps_per_cta, format_stream_stamps_per_cta)
  for (int i = 6; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--units") units = std::atoi(argv[i + 1]);
    else if (a == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--per-cta") per_cta = argv[i + 1];
    else if (a == "--calls") calls = std::atoi(argv[i + 1]);
    else if (a == "--mode") {
      const std::string v = argv[i + 1];
      if (v != "cold" && v != "hot") return usage(("--mode is cold or hot, not " + v).c_str());
      hot = v == "hot";
    } else return usage(("unknown option " + a).c_str());
  }
  if (units < 1) return usage("--units must be at least 1");
  if (calls < 1 || calls > 1000) return usage("--calls must be 1 to 1000");
  if (const std::string e = sm90::shape_error(s); !e.empty()) return usage(e.c_str());

  const DeviceInfo info = query_device(0);
  if (!info.has_gpu) {
    std::fprintf(stderr, "sm90_stamps: needs a GPU: %s\n", info.no_gpu_reason.c_str());
    return 4;
  }
  if (info.cc() != 90) {
    std::fprintf(stderr, "sm90_stamps: needs an sm_90 GPU, device 0 is %s (%s)\n", info.name.c_str(),
                 info.cc_string().c_str());
    return 4;
  }
  sm90::Config cfg;
  if (spelling == "auto") {
    cfg = sm90::choose_config(s, info.sm_count, sm90::Path::Fused);
  } else if (const std::string e = sm90::parse_config(spelling, &cfg); !e.empty()) {
    return usage(("CONFIG: " + e).c_str());
  }
  cfg = sm90::normalize(s, cfg);
  if (cfg.path == sm90::Path::Stream) return run_stream(s, cfg, calls, hot, seed, info, per_cta);
  if (cfg.path != sm90::Path::Fused)
    return usage("CONFIG: a fused or a stream configuration (the time lines are those two kernels')");

  const int ctas = 2 * info.sm_count > cfg.fused.workers ? 2 * info.sm_count : cfg.fused.workers;
  Harness h(s, cfg, seed, info, sm90::StampLayout::words(ctas, units), hot);
  h.dev.fused_stamps = {h.stamps.get<uint64_t>(), ctas, units, 0};
  std::vector<uint64_t> host;
  std::vector<double> spans;
  for (int call = 0; call < calls; ++call) {
    h.call(s, [&] { sm90::launch_fused(s, h.dt.view(), cfg.fused, h.ws.get(), h.stream.get(), h.dev); });
    host = h.read(sm90::StampLayout::words(h.dev.fused_stamps.grid, units));
    spans.push_back(sm90::summarize_stamps(host, h.dev.fused_stamps.grid, units).span_ns / 1e3);
  }
  const int grid = h.dev.fused_stamps.grid;

  // The output of that call, checked on sampled elements (every call's output is checked by the
  // tool and the GPU tests; here only that the stamps did not break it).
  int64_t checked = 0;
  const int64_t bad = check_sampled(s, h.dt, seed, &checked);

  const sm90::StampSummary sum = sm90::summarize_stamps(host, grid, units);
  // SM clock: cycles over nanoseconds of each CTA's own span, the median
  std::vector<double> mhz;
  for (int c = 0; c < grid; ++c) {
    const uint64_t* hd = host.data() + sm90::StampLayout::at(c, -1, units);
    const double ns = double(hd[sm90::StampLayout::kEndNs] - hd[sm90::StampLayout::kEntryNs]);
    if (hd[sm90::StampLayout::kUnits] > 0 && ns > 1000)
      mhz.push_back(double(hd[sm90::StampLayout::kEndClk] - hd[sm90::StampLayout::kEntryClk]) / ns * 1e3);
  }
  std::sort(mhz.begin(), mhz.end());
  const double clock = mhz.empty() ? 0 : mhz[mhz.size() / 2];
  std::printf("problem   %lldx%lldx%lld L=%lld, %s, grid %d, SM clock %.0f MHz (from the stamps)\n",
              (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.l, sm90::describe(cfg).c_str(), grid,
              clock);
  std::printf("verify    %s (%lld sampled elements, %lld wrong)\n", bad ? "FAILED" : "PASSED",
              (long long)checked, (long long)bad);
  print_spans(calls, h.hot, spans);
  std::printf("%s", sm90::format_stamps(sum, clock).c_str());
  if (!per_cta.empty()) write_new_file(per_cta, sm90::format_stamps_per_cta(sum));
  return bad ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "sm90_stamps: %s\n", e.what());
  return 3;
}
