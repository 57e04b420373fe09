#include "src/measure/sol.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "src/device/device_info.hpp"
#include "src/problem/problem.hpp"

namespace nvfp4 {

const char* numerics_name(Numerics n) {
  switch (n) {
    case Numerics::FP4: return "fp4";
    case Numerics::FP8: return "fp8";
    case Numerics::FP16: return "fp16";
  }
  return "?";
}

// Dense figures are the datasheets' "with sparsity" figures halved, per GPU.
const std::vector<GpuSpec>& gpu_specs() {
  static const std::vector<GpuSpec> specs = {
      // NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100), H100 PCIe column: FP16/BF16
      // 1,513 TF and FP8 3,026 TF with sparsity; 2 TB/s.
      {"NVIDIA H100 PCIe", "H100 PCIe", "", 9, 0, 0, 1513.0, 756.5, 2.0, 0, 0,
       "NVIDIA H100 datasheet (PCIe)", false},
      // Same datasheet, H100 NVL column: 1,671 / 3,341 TF with sparsity; 3.9 TB/s.
      {"NVIDIA H100 NVL", "H100 NVL", "", 9, 0, 0, 1670.5, 835.5, 3.9, 0, 0,
       "NVIDIA H100 datasheet (NVL)", false},
      // Same datasheet, H100 SXM column: 1,979 / 3,958 TF with sparsity; 3.35 TB/s. The SXM
      // part's device name is "NVIDIA H100 80GB HBM3" (no form factor in it).
      {"NVIDIA H100 SXM", "H100", "", 9, 0, 0, 1979.0, 989.5, 3.35, 0, 0,
       "NVIDIA H100 datasheet (SXM)", false},
      // NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200), H200 NVL column:
      // 1,671 / 3,341 TF with sparsity; 4.8 TB/s.
      {"NVIDIA H200 NVL", "H200 NVL", "", 9, 0, 0, 1670.5, 835.5, 4.8, 0, 0,
       "NVIDIA H200 datasheet (NVL)", false},
      // Same datasheet, H200 SXM column: 1,979 / 3,958 TF with sparsity; 4.8 TB/s.
      // Measured here (docs/facts.md section 6): 790 TF/s BF16 cuBLAS, 4.3 TB/s device copy.
      {"NVIDIA H200 SXM", "H200", "", 9, 0, 0, 1979.0, 989.5, 4.8, 790.0, 4.3,
       "NVIDIA H200 datasheet (SXM); measured: nvfp4bench docs/facts.md section 6", false},
      // GB200 NVL72 datasheet, per GPU: FP4 20 PF, FP8 10 PF, FP16/BF16 5 PF with sparsity;
      // 8 TB/s. Lead: read from secondary summaries of the datasheet.
      {"NVIDIA GB200", "GB200", "", 10, 0, 10000.0, 5000.0, 2500.0, 8.0, 0, 0,
       "NVIDIA GB200 NVL72 datasheet (per GPU), via secondary sources", true},
      // HGX B200 datasheet, per GPU (8 per board): FP4 144 PF, FP8 72 PF, FP16/BF16 36 PF
      // with sparsity per board; 64 TB/s per board = 8 TB/s. (GPU MODE's speed-of-light
      // figures correspond to ~7.7 TB/s: pass a GpuSpec with that bandwidth to reproduce them.)
      {"NVIDIA B200", "B200", "GB200", 10, 0, 9000.0, 4500.0, 2250.0, 8.0, 0, 0,
       "NVIDIA HGX B200 datasheet (per GPU)", true},
      // GB300 NVL72, per GPU: FP4 15 PF dense (NVIDIA Blackwell Ultra announcements), FP8 and
      // FP16 as B200/GB200 class; 8 TB/s. Lead.
      {"NVIDIA GB300", "GB300", "", 10, 3, 15000.0, 5000.0, 2500.0, 8.0, 0, 0,
       "NVIDIA Blackwell Ultra announcements, via secondary sources", true},
      // HGX B300, per GPU: FP4 105 PF dense per 8-GPU board (13.1 PF), FP8 72 PF and FP16/BF16
      // 36 PF with sparsity per board; 8 TB/s. Lead: secondary summaries of the datasheet.
      {"NVIDIA B300", "B300", "GB300", 10, 3, 13125.0, 4500.0, 2250.0, 8.0, 0, 0,
       "NVIDIA HGX B300 datasheet (per GPU), via secondary sources", true},
      // NVIDIA A100 datasheet, 80GB SXM: FP16/BF16 312 TF dense, no FP8/FP4; 2,039 GB/s.
      {"NVIDIA A100 SXM4 80GB", "A100-SXM4-80GB", "", 8, 0, 0, 0, 312.0, 2.039, 0, 0,
       "NVIDIA A100 datasheet (80GB SXM)", false},
  };
  return specs;
}

std::optional<GpuSpec> find_gpu_spec(const std::string& device_name, int cc_major, int cc_minor) {
  for (const GpuSpec& g : gpu_specs()) {
    if (g.cc_major != cc_major || g.cc_minor != cc_minor) continue;
    if (device_name.find(g.match) == std::string::npos) continue;
    if (!g.exclude.empty() && device_name.find(g.exclude) != std::string::npos) continue;
    return g;
  }
  return std::nullopt;
}

double min_traffic_bytes(const Shape& s) { return double(TensorBytes::of(s).min_traffic()); }

SolResult speed_of_light(const Shape& s, double bytes_moved, const GpuSpec& gpu, Numerics numerics,
                         SolBasis basis) {
  SolResult r;
  r.known = true;
  r.gpu = gpu.name;
  r.bytes = bytes_moved;
  r.flops = s.flops();

  const bool measured_bw = basis == SolBasis::Measured && gpu.measured_bandwidth_tbs > 0;
  r.bandwidth_tbs = measured_bw ? gpu.measured_bandwidth_tbs : gpu.bandwidth_tbs;
  r.bandwidth_basis = measured_bw ? "measured" : "datasheet";

  // The format that bounds the arithmetic: the requested one if the GPU has tensor cores for
  // it, else FP16 (a GPU without FP4 tensor cores runs NVFP4 through 16-bit MMAs at best).
  double tf = 0;
  switch (numerics) {
    case Numerics::FP4: tf = gpu.fp4_tflops; break;
    case Numerics::FP8: tf = gpu.fp8_tflops; break;
    case Numerics::FP16: tf = gpu.fp16_tflops; break;
  }
  r.compute_format = numerics_name(numerics);
  bool use_fp16 = numerics == Numerics::FP16;
  if (tf <= 0) {
    use_fp16 = true;
    r.compute_format = fmt::format("fp16 (no {} tensor cores)", numerics_name(numerics));
  }
  const bool measured_tf = use_fp16 && basis == SolBasis::Measured && gpu.measured_fp16_tflops > 0;
  r.tflops = use_fp16 ? (measured_tf ? gpu.measured_fp16_tflops : gpu.fp16_tflops) : tf;
  r.compute_basis = measured_tf ? "measured" : "datasheet";

  r.memory_s = r.bandwidth_tbs > 0 ? bytes_moved / (r.bandwidth_tbs * 1e12) : 0;
  r.compute_s = r.tflops > 0 ? r.flops / (r.tflops * 1e12) : 0;
  r.sol_s = std::max(r.memory_s, r.compute_s);
  r.memory_bound = r.memory_s >= r.compute_s;
  return r;
}

SolResult speed_of_light_for(const Shape& s, const DeviceInfo& dev, Numerics numerics,
                             SolBasis basis) {
  const std::optional<GpuSpec> g =
      dev.has_gpu ? find_gpu_spec(dev.name, dev.cc_major, dev.cc_minor) : std::nullopt;
  if (!g) {
    SolResult r;
    r.gpu = "unknown";
    r.reason = dev.has_gpu ? fmt::format(
                                 "GPU '{}' (compute capability {}) is not in the "
                                 "speed-of-light table",
                                 dev.name, dev.cc_string())
                           : "no CUDA GPU";
    r.bytes = min_traffic_bytes(s);
    r.flops = s.flops();
    return r;
  }
  return speed_of_light(s, min_traffic_bytes(s), *g, numerics, basis);
}

}  // namespace nvfp4
