// Speed of light: the least time a GEMM can take on a GPU, max(bytes / bandwidth,
// FLOPs / tensor throughput), from a table of known GPUs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

struct DeviceInfo;

// The tensor-core format whose throughput bounds the arithmetic.
enum class Numerics { FP4, FP8, FP16 };
const char* numerics_name(Numerics n);

// Which figures to use: the datasheet's peaks, or what was measured on such a GPU where the
// table has a measurement (docs/facts.md section 6), falling back to the datasheet elsewhere.
enum class SolBasis { Datasheet, Measured };

struct GpuSpec {
  std::string name;                // "NVIDIA H200 SXM"
  std::string match;               // substring of the CUDA device name ("H200")
  std::string exclude;             // a device name containing this is not this GPU ("" = none)
  int cc_major = 0, cc_minor = 0;  // required compute capability
  // Dense (no 2:4 sparsity) tensor throughput in TFLOP/s; 0 = no tensor cores for the format.
  double fp4_tflops = 0, fp8_tflops = 0, fp16_tflops = 0;
  double bandwidth_tbs = 0;  // DRAM bandwidth, TB/s (10^12 bytes/s)
  // Measured on such a GPU (0 = not measured).
  double measured_fp16_tflops = 0, measured_bandwidth_tbs = 0;
  std::string source;  // where the figures come from
  bool lead = false;   // figures from secondary sources, not checked against a datasheet
};

// Every GPU the tool knows, most specific names first.
const std::vector<GpuSpec>& gpu_specs();
// The table entry for a device name and compute capability, if any.
std::optional<GpuSpec> find_gpu_spec(const std::string& device_name, int cc_major, int cc_minor);

struct SolResult {
  bool known = false;
  std::string gpu;     // the table entry's name, or "unknown"
  std::string reason;  // why unknown
  double bytes = 0, flops = 0;
  double memory_s = 0;   // bytes / bandwidth
  double compute_s = 0;  // flops / throughput
  double sol_s = 0;      // the larger of the two
  bool memory_bound = false;
  const char* bound() const { return !known ? "unknown" : memory_bound ? "memory" : "compute"; }
  double bandwidth_tbs = 0, tflops = 0;  // the figures used
  std::string compute_format;  // format whose throughput was used ("fp16: no FP4 tensor cores")
  std::string bandwidth_basis, compute_basis;  // "datasheet" or "measured"
};

// FLOPs = shape.flops(); bytes = what the GEMM moves at least (use min_traffic_bytes).
SolResult speed_of_light(const Shape& s, double bytes_moved, const GpuSpec& gpu, Numerics numerics,
                         SolBasis basis = SolBasis::Datasheet);
// The least traffic of an NVFP4 GEMM: A, B, blocked padded scales, fp16 C
// (TensorBytes::min_traffic).
double min_traffic_bytes(const Shape& s);
// For the device the tool runs on; "unknown" (known = false, reason set) when not in the table.
SolResult speed_of_light_for(const Shape& s, const DeviceInfo& dev, Numerics numerics,
                             SolBasis basis = SolBasis::Datasheet);

}  // namespace nvfp4
