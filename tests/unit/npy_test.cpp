#include <gtest/gtest.h>

#include "src/report/npy.hpp"

using namespace nvfp4;

TEST(Npy, HeaderIsAlignedAndDescribesTheArray) {
  const std::string h = npy_header(NpyType::F16, {2, 3, 4});
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(size_t(uint8_t(h[8])) + (size_t(uint8_t(h[9])) << 8), h.size() - 10);
  EXPECT_NE(h.find("'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 4), }"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
  EXPECT_NE(npy_header(NpyType::U8, {5}).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(npy_header(NpyType::U8, {5}).find("'|u1'"), std::string::npos);
}
