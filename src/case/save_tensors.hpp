// --save-tensors DIR: the problem as .npy files (a, b, sfa, sfb, blocked scales, c, ref) and a
// problem.json naming the shape, seed, distribution and implementations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/case/run_case.hpp"

namespace nvfp4 {

// `ref` is null when the check was sampled (no full reference output exists).
void save_tensors(const std::string& dir, const CaseSpec& spec, const HostTensors& h,
                  const std::vector<uint16_t>& c, const std::vector<uint16_t>* ref,
                  const std::string& kernel, const std::string& reference);

}  // namespace nvfp4
