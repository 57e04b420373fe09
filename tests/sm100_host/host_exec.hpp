// Runs the sm100 kernel's own device code on the host models (kernels/sm100/host_model) for
// one problem and checks what it wrote against the exact CPU reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/sm100/host_model/model.hpp"
#include "src/gemm/gemm.hpp"
#include "src/problem/problem.hpp"
#include "src/verify/verify.hpp"

namespace nvfp4 {
namespace sm100_host {

struct Spec {
  Shape shape;
  uint64_t data_seed = 1111;
  int sm_count = 148;             // the plan's SM count (a B200 has 148)
  int grid = 0;                   // 0: the launcher's grid (launch_grid)
  std::vector<int64_t> tiles;     // output tiles to run and check (empty: all)
  int64_t exact_per_tile = 4096;  // elements per tile checked against cpu-exact (all if fewer)
  sm100::host_model::Config model;
  int kernel_plant = 0;  // the kernel built with this planted bug (kernels/sm100/plant.hpp)
  const HostTensors* operands = nullptr;  // given operands of `shape` (null: from data_seed)
};

struct Outcome {
  sm100::host_model::Result model;
  VerifyResult verify;      // the checked tiles
  int64_t stray_writes = 0;  // outputs written outside the checked tiles
  int64_t counters_left = 0; // split-K counters not reset to zero
  int splits = 0, grid = 0, units = 0, ctas = 0;
  std::vector<uint16_t> c;   // the whole output
  bool passed() const {
    return model.clean() && verify.passed() && stray_writes == 0 && counters_left == 0;
  }
  std::string summary() const;
};

Outcome run(const Spec& spec);

}  // namespace sm100_host
}  // namespace nvfp4
