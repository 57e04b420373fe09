// Planted for the ctest sm90_heuristics_check_catches_cuda: host code that reaches a CUDA header
// through the Gemm interface, which check_host_only.cmake must refuse.
#include "src/gemm/gemm.hpp"

int planted() { return 0; }
