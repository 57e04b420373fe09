// The sm90 kernels' wgmma shared-memory descriptor (kernels/sm90/descriptors.hpp), bit for bit
// against values worked out by hand from the PTX ISA's matrix descriptor format for wgmma:
// 0-13 start address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset, 62-63 swizzle
// (1: 128-byte). CPU only.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/sm90/descriptors.hpp"

using namespace nvfp4::sm90;

TEST(Sm90SmemDesc, KMajorSw128AtAnAlignedTile) {
  // start 0x2400 >> 4 = 0x240; LBO 16 >> 4 = 1 at bit 16; SBO 1024 >> 4 = 0x40 at bit 32;
  // swizzle 128B = 1 at bit 62.
  const uint64_t want = 0x240ull | (1ull << 16) | (0x40ull << 32) | (1ull << 62);
  EXPECT_EQ(make_kmajor_sw128_desc(0x2400).pack(), want);
  EXPECT_EQ(want, 0x4000004000010240ull);
  EXPECT_TRUE(WgmmaSmemDesc::reserved_bits_zero(want));
}

TEST(Sm90SmemDesc, UnpackGivesTheFieldsBack) {
  WgmmaSmemDesc d;
  d.start_addr = 0x3FFF0;  // the largest address the 14-bit field holds
  d.lbo_bytes = 0x3FFF0;
  d.sbo_bytes = 2048;
  d.base_offset = 5;
  d.swizzle = WgmmaSwizzle::B32;
  const WgmmaSmemDesc e = WgmmaSmemDesc::unpack(d.pack());
  EXPECT_EQ(e.start_addr, d.start_addr);
  EXPECT_EQ(e.lbo_bytes, d.lbo_bytes);
  EXPECT_EQ(e.sbo_bytes, d.sbo_bytes);
  EXPECT_EQ(e.base_offset, 5u);
  EXPECT_EQ(e.swizzle, WgmmaSwizzle::B32);
  EXPECT_TRUE(WgmmaSmemDesc::reserved_bits_zero(d.pack()));
  EXPECT_FALSE(WgmmaSmemDesc::reserved_bits_zero(d.pack() | (1ull << 47)));
  for (auto s : {WgmmaSwizzle::None, WgmmaSwizzle::B128, WgmmaSwizzle::B64, WgmmaSwizzle::B32}) {
    d.swizzle = s;
    EXPECT_EQ(WgmmaSmemDesc::unpack(d.pack()).swizzle, s);
    EXPECT_EQ(d.pack() >> 62, static_cast<uint64_t>(s));
  }
}

// The kernels step a packed descriptor along K (+32 bytes a k16) and across ring stages by
// adding wgmma_desc_advance: the same as the descriptor of the moved address, up to the end of
// the 228 KB of shared memory an SM has.
TEST(Sm90SmemDesc, AdvancingMovesOnlyTheStartAddress) {
  for (uint32_t base = 0; base < 228 * 1024; base += 1024)
    for (uint32_t step : {32u, 64u, 96u, 1024u, 16384u}) {
      if (base + step >= 228 * 1024) continue;
      EXPECT_EQ(make_kmajor_sw128_desc(base).pack() + wgmma_desc_advance(step),
                make_kmajor_sw128_desc(base + step).pack())
          << base << " + " << step;
    }
}
