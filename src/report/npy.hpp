// Minimal .npy (NumPy format 1.0) writer: C order, little-endian, uint8 or float16.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfp4 {

enum class NpyType { U8, F16 };

// The header bytes for `shape` (exposed for tests).
std::string npy_header(NpyType type, const std::vector<int64_t>& shape);
void write_npy(const std::string& path, NpyType type, const std::vector<int64_t>& shape,
               const void* data, size_t bytes);

}  // namespace nvfp4
