// The one TMA tensor-map encoder: cuTensorMapEncodeTiled, fetched once through the runtime's
// driver entry point (no link against libcuda), its failures reported as the tool's errors.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace nvfp4 {

// A tiled tensor map's parameters, innermost dimension first (the driver's argument order).
struct TensorMapSpec {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  uint32_t rank = 0;                          // 1..5
  uint64_t dims[5] = {0, 0, 0, 0, 0};         // elements
  uint64_t strides_bytes[4] = {0, 0, 0, 0};   // byte stride of dims[1..rank-1]
  uint32_t box[5] = {1, 1, 1, 1, 1};          // elements per copy along each dimension
  uint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;  // NONE: out of bounds reads zero
};

// Encodes `spec` over `base`; throws runtime_error (exit 3) naming `what` and the CUresult.
CUtensorMap encode_tensor_map(const TensorMapSpec& spec, const void* base, const std::string& what);

}  // namespace nvfp4
