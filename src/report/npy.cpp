#include "src/report/npy.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "src/core/error.hpp"

namespace nvfp4 {

std::string npy_header(NpyType type, const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(3, 4)" but "(3,)"
  else if (shape.size() == 1) dims.pop_back();
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                 type == NpyType::U8 ? "|u1" : "<f2", dims);
  // magic(6) + version(2) + header length(2) + dict + '\n', padded with spaces to 64 bytes.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string h("\x93NUMPY\x01\x00", 8);
  h.push_back(char(dict.size() & 0xFF));
  h.push_back(char(dict.size() >> 8));
  return h + dict;
}

void write_npy(const std::string& path, NpyType type, const std::vector<int64_t>& shape,
               const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw usage_error(fmt::format("--save-tensors: cannot write {} ({})", path, std::strerror(errno)));
  const std::string h = npy_header(type, shape);
  out.write(h.data(), std::streamsize(h.size()));
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!out) throw runtime_error(fmt::format("writing {} failed", path));
}

}  // namespace nvfp4
