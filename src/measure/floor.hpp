// The physical floor of a problem: the least time in which any implementation can compute it on
// this machine, so a timing below it is not a measurement of the work (docs/cli.md, "The
// verdict"). Beside the speed of light (src/measure/sol.hpp), which it undercuts on purpose:
//   compute  FLOPs at the device's fastest dense tensor rate in any format (FP4 on Blackwell,
//            FP8/INT8 on Hopper; the speed of light uses the rate of the format the GEMM can use)
//   memory   the minimum traffic at peak DRAM bandwidth, counted only where the operands were
//            evicted from L2 before the timed calls (cold, rotate and graph modes; not hot)
// The host backend's floor is a bound on any CPU, not this one's measured peak: every hardware
// thread at kHostFloorGhz retiring kHostFloorOpsPerCycle operations per cycle.
#pragma once

#include <string>

#include "src/gemm/gemm.hpp"
#include "src/measure/sol.hpp"

namespace nvfp4 {

struct DeviceInfo;

// Above any CPU core's dense matrix rate (Intel AMX: 1024 INT8 multiply-adds, 2048 operations,
// per cycle) and clock.
constexpr double kHostFloorOpsPerCycle = 4096;
constexpr double kHostFloorGhz = 6.0;

struct Floor {
  bool known = false;
  std::string reason;  // why unknown
  std::string basis;   // what it rests on, one line
  double compute_s = 0, memory_s = 0, floor_s = 0;
  bool memory_counted = false;  // the operands were evicted from L2
  double tflops = 0, bandwidth_tbs = 0;
};

// The fastest dense tensor rate of a GPU in any format, TFLOP/s, and that format's name.
double fastest_tensor_tflops(const GpuSpec& gpu, std::string* format = nullptr);
Floor gpu_floor(const Shape& s, const GpuSpec& gpu, bool operands_cold);
Floor host_floor(const Shape& s, int hardware_threads);
// For the machine the tool runs on: the GPU's table entry, or the host bound without a GPU.
Floor floor_for(const Shape& s, const DeviceInfo& dev, bool operands_cold);

// Empty when `median_us` is at or above the floor, else one line with both figures.
std::string below_floor(double median_us, const Floor& f);

}  // namespace nvfp4
