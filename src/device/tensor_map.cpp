#include "src/device/tensor_map.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>

#include "src/core/error.hpp"
#include "src/device/cuda_check.hpp"

namespace nvfp4 {
namespace {

using EncodeTiledFn = decltype(&cuTensorMapEncodeTiled);

EncodeTiledFn encode_tiled_fn() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    NVFP4_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                      cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      throw runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (needs 12.0+)");
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

}  // namespace

CUtensorMap encode_tensor_map(const TensorMapSpec& p, const void* base, const std::string& what) {
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elem_strides[5];
  for (int i = 0; i < 5; ++i) {
    dims[i] = p.dims[i];
    box[i] = p.box[i];
    elem_strides[i] = p.elem_strides[i];
  }
  for (int i = 0; i < 4; ++i) strides[i] = p.strides_bytes[i];
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  const CUresult r = encode_tiled_fn()(&map, p.dtype, p.rank, const_cast<void*>(base), dims, strides,
                                       box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, p.swizzle,
                                       p.l2_promotion, p.oob_fill);
  if (r != CUDA_SUCCESS)
    throw runtime_error(fmt::format("cuTensorMapEncodeTiled({}) failed: CUresult {}", what,
                                    static_cast<int>(r)));
  return map;
}

}  // namespace nvfp4
