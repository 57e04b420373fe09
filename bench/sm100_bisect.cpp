// Runs the sm100 bisect (kernels/sm100/bisect.hpp) on a Blackwell GPU: each structured probe
// through the sm100 kernel as the tool runs it, C copied back, then the decoder's verdict on the
// four behaviours - (a) the K step inside the swizzle atom, (b) the tcgen05.cp lane mapping,
// (c) the scale placement in tensor memory, (d) the epilogue (docs/kernels.md, "The bisect").
// scripts/device/blackwell-first-run.sh runs it as its step `bisect`.
// Usage: sm100_bisect [--device N] [--list]
// Exit codes: 0 no behaviour differs; 1 one or more differ (named on stdout); 2 bad usage, or
// no GPU the sm100 kernel runs on (one line on stderr); 3 a CUDA error.
#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "kernels/sm100/bisect.hpp"
#include "src/device/buffer.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {
std::unique_ptr<Gemm> make_sm100_gemm();  // kernels/sm100/sm100.cu
}

namespace {

using namespace nvfp4;
namespace bisect = nvfp4::sm100::bisect;

template <class T>
DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer d(host.size() * sizeof(T));
  NVFP4_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

// One probe through the kernel: its operands uploaded, C poisoned, C as the kernel wrote it.
std::vector<uint16_t> run_probe(Gemm& gemm, const bisect::Probe& probe) {
  const HostTensors& t = probe.tensors;
  const DeviceBuffer a = upload(t.a), b = upload(t.b), sfa = upload(t.sfa), sfb = upload(t.sfb);
  const DeviceBuffer sfa_blocked = upload(t.sfa_blocked), sfb_blocked = upload(t.sfb_blocked);
  const DeviceBuffer c = upload(t.c);  // poisoned: an output never written stays poison
  Operands ops;
  ops.a = a.get<uint8_t>();
  ops.b = b.get<uint8_t>();
  ops.sfa = sfa.get<uint8_t>();
  ops.sfb = sfb.get<uint8_t>();
  ops.sfa_blocked = sfa_blocked.get<uint8_t>();
  ops.sfb_blocked = sfb_blocked.get<uint8_t>();
  ops.c = c.get<uint16_t>();
  const DeviceBuffer workspace(gemm.workspace_bytes(bisect::kShape));
  gemm.prepare(bisect::kShape, ops, nullptr);
  gemm.run(bisect::kShape, ops, workspace.get(), nullptr);
  NVFP4_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> out(t.c.size());
  NVFP4_CUDA_CHECK(cudaMemcpy(out.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs the sm100 bisect's structured probes on a Blackwell GPU and names which "
               "hardware behaviour differs from the documented one (docs/kernels.md, \"The "
               "bisect\"). Exit codes: 0 none differs, 1 one or more differ, 2 bad usage or no "
               "Blackwell GPU, 3 CUDA error.",
               "sm100_bisect"};
  int device = 0;
  bool list = false;
  app.add_option("--device", device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  app.add_flag("--list", list, "print the probes and exit (no GPU needed)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "sm100_bisect: %s\n", e.what());
    return 2;
  }
  const std::vector<bisect::Probe> probes = bisect::probes();
  if (list) {
    for (const auto& p : probes) fmt::print("{:<22} {}\n", p.name, p.what);
    return 0;
  }
  try {
    const DeviceInfo dev = query_device(device);
    auto gemm = make_sm100_gemm();
    const Availability av = gemm->availability(dev);
    if (!av.ok) {
      std::fprintf(stderr, "sm100_bisect: sm100 cannot run on device %d: %s\n", device,
                   av.reason.c_str());
      return 2;
    }
    NVFP4_CUDA_CHECK(cudaSetDevice(device));
    fmt::print("sm100 bisect on {} (compute capability {}): {} probes of {}x{}x{}\n", dev.name,
               dev.cc_string(), probes.size(), bisect::kShape.m, bisect::kShape.n, bisect::kShape.k);
    std::vector<std::vector<uint16_t>> outputs;
    for (const auto& p : probes) {
      outputs.push_back(run_probe(*gemm, p));
      fmt::print("ran {:<22} {}\n", p.name, p.what);
    }
    const bisect::Report report = bisect::decode(outputs);
    fmt::print("{}", report.text());
    std::fflush(stdout);
    return report.differs.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sm100_bisect: %s\n", e.what());
    return 3;
  }
}
