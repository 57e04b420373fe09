// The sm100 kernel's descriptors, bit for bit against values worked out by hand from the PTX
// ISA tables (PTX ISA 9.x section 9.7.16.4: Table 40 shared memory descriptor, Table 44
// instruction descriptor for .kind::mxf4 / .kind::mxf4nvf4), its TMA map parameters against
// the tool's layouts, and its work schedule. CPU only: nothing here needs a Blackwell GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "src/format/nvfp4.hpp"
#include "kernels/sm100/descriptors.hpp"
#include "kernels/sm100/schedule.hpp"

using namespace nvfp4;
using namespace nvfp4::sm100;

// ---- instruction descriptor (Table 44) ------------------------------------------------------

TEST(Sm100InstrDesc, KernelDescriptorM128N128) {
  // Derivation, field by field (bit positions from Table 44):
  //   bits 0-1  reserved              0
  //   bit  2    sparsity: dense       0
  //   bits 4-5  SFB id (4X needs 0)   0
  //   bits 7-9  atype E2M1 = 1        1 << 7  = 0x00000080
  //   bits 10-11 btype E2M1 = 1       1 << 10 = 0x00000400
  //   bits 13,14 negate A/B           0
  //   bits 15,16 transpose A/B (K-major) 0
  //   bits 17-22 N >> 3 = 128 >> 3 = 16   16 << 17 = 0x00200000
  //   bit  23   scale type UE4M3 = 0  0
  //   bits 27-28 M >> 7 = 128 >> 7 = 1    1 << 27 = 0x08000000
  //   bits 29-30 SFA id               0
  //   bit  31   K = 64 dense          0
  //   sum: 0x08000000 + 0x00200000 + 0x400 + 0x80 = 0x08200480
  const InstrDescBlockScaled d = make_nvfp4_instr_desc(128, 128);
  EXPECT_EQ(d.pack(), 0x08200480u);
  EXPECT_EQ(d.m(), 128u);
  EXPECT_EQ(d.n(), 128u);
  EXPECT_EQ(d.check(), nullptr);
}

TEST(Sm100InstrDesc, OtherShapes) {
  // M 128, N 256: N >> 3 = 32 -> 32 << 17 = 0x00400000; + 0x08000000 + 0x480 = 0x08400480
  EXPECT_EQ(make_nvfp4_instr_desc(128, 256).pack(), 0x08400480u);
  // M 128, N 16: N >> 3 = 2 -> 2 << 17 = 0x00040000; + 0x08000000 + 0x480 = 0x08040480
  EXPECT_EQ(make_nvfp4_instr_desc(128, 16).pack(), 0x08040480u);
  // M 256 (cta_group::2), N 64: M >> 7 = 2 -> 2 << 27 = 0x10000000; N >> 3 = 8 -> 0x00100000;
  // + 0x480 = 0x10100480
  EXPECT_EQ(make_nvfp4_instr_desc(256, 64).pack(), 0x10100480u);
}

TEST(Sm100InstrDesc, Mxf4FlavourWithUe8m0AndScaleIds) {
  // kind::mxf4 style: UE8M0 scales (bit 23 = 1 -> 0x00800000), SFA id 2 (bits 29-30:
  // 2 << 29 = 0x40000000), SFB id 2 (bits 4-5: 2 << 4 = 0x20), M 128 N 128 (0x08200480 as above)
  // sum: 0x08200480 + 0x00800000 + 0x40000000 + 0x20 = 0x48A004A0
  InstrDescBlockScaled d = make_nvfp4_instr_desc(128, 128);
  d.scale_type = ScaleType::UE8M0;
  d.sfa_id = 2;
  d.sfb_id = 2;
  EXPECT_EQ(d.pack(), 0x48A004A0u);
  EXPECT_EQ(d.check(), nullptr);
}

TEST(Sm100InstrDesc, EachFieldLandsOnItsBits) {
  // Each field at its largest value must set exactly its bit range of Table 44.
  struct Case {
    const char* field;
    void (*set)(InstrDescBlockScaled&);
    uint32_t mask;
  };
  const Case cases[] = {
      {"sparsity bit 2", [](InstrDescBlockScaled& d) { d.sparse = 1; }, 0x00000004u},
      {"SFB id bits 4-5", [](InstrDescBlockScaled& d) { d.sfb_id = 3; }, 0x00000030u},
      {"atype bits 7-9", [](InstrDescBlockScaled& d) { d.a_type = 7; }, 0x00000380u},
      {"btype bits 10-11", [](InstrDescBlockScaled& d) { d.b_type = 3; }, 0x00000C00u},
      {"negate A bit 13", [](InstrDescBlockScaled& d) { d.negate_a = 1; }, 0x00002000u},
      {"negate B bit 14", [](InstrDescBlockScaled& d) { d.negate_b = 1; }, 0x00004000u},
      {"transpose A bit 15", [](InstrDescBlockScaled& d) { d.transpose_a = 1; }, 0x00008000u},
      {"transpose B bit 16", [](InstrDescBlockScaled& d) { d.transpose_b = 1; }, 0x00010000u},
      {"N>>3 bits 17-22", [](InstrDescBlockScaled& d) { d.n_shr3 = 63; }, 0x007E0000u},
      {"scale type bit 23", [](InstrDescBlockScaled& d) { d.scale_type = ScaleType::UE8M0; },
       0x00800000u},
      {"M>>7 bits 27-28", [](InstrDescBlockScaled& d) { d.m_shr7 = 3; }, 0x18000000u},
      {"SFA id bits 29-30", [](InstrDescBlockScaled& d) { d.sfa_id = 3; }, 0x60000000u},
      {"K dim bit 31", [](InstrDescBlockScaled& d) { d.k_dim = 1; }, 0x80000000u},
  };
  uint32_t all = 0;
  for (const Case& c : cases) {
    InstrDescBlockScaled d;
    d.a_type = 0;
    d.b_type = 0;
    c.set(d);
    EXPECT_EQ(d.pack(), c.mask) << c.field;
    EXPECT_EQ(all & c.mask, 0u) << c.field << " overlaps another field";
    all |= c.mask;
  }
  // Reserved bits 0-1, 3, 6, 12 and 24-26 are never written.
  EXPECT_EQ(all, ~(0x00000003u | 0x00000008u | 0x00000040u | 0x00001000u | 0x07000000u));
}

TEST(Sm100InstrDesc, UnpackInvertsPack) {
  InstrDescBlockScaled d = make_nvfp4_instr_desc(256, 200 / 8 * 8);
  d.negate_b = 1;
  d.sfa_id = 1;
  d.k_dim = 1;
  const InstrDescBlockScaled e = InstrDescBlockScaled::unpack(d.pack());
  EXPECT_EQ(e.pack(), d.pack());
  EXPECT_EQ(e.m(), 256u);
  EXPECT_EQ(e.n(), 200u);
  EXPECT_EQ(e.negate_b, 1u);
  EXPECT_EQ(e.sfa_id, 1u);
  EXPECT_EQ(e.k_dim, 1u);
}

TEST(Sm100InstrDesc, CheckRejectsIllegalCombinations) {
  EXPECT_NE(make_nvfp4_instr_desc(64, 128).check(), nullptr);   // no M = 64 for FP4
  EXPECT_NE(make_nvfp4_instr_desc(128, 8).check(), nullptr);    // M 128 needs N % 16
  EXPECT_NE(make_nvfp4_instr_desc(128, 264).check(), nullptr);  // N <= 256
  InstrDescBlockScaled t = make_nvfp4_instr_desc(128, 128);
  t.transpose_a = 1;  // FP4 must be K-major
  EXPECT_NE(t.check(), nullptr);
  InstrDescBlockScaled s = make_nvfp4_instr_desc(128, 128);
  s.sfa_id = 2;  // UE4M3 x 4X requires id 0
  EXPECT_NE(s.check(), nullptr);
}

// ---- shared memory descriptor (Table 40) ----------------------------------------------------

TEST(Sm100SmemDesc, KmajorSwizzle128At0x400) {
  // start address 0x400: encode = (0x400 & 0x3FFFF) >> 4 = 0x40, bits 0-13  -> 0x0000000000000040
  // LBO 16 bytes ("assumed 1" for swizzled K-major): encode 1, bits 16-29     -> 0x0000000000010000
  // SBO 1024 bytes (8 rows x 128 B): encode 64 = 0x40, bits 32-45           -> 0x0000004000000000
  // bits 46-48 fixed 0b001                                                   -> 0x0000400000000000
  // base offset 0 (tile 1024-aligned), bit 52 relative mode 0
  // bits 61-63 swizzle 128B = 2: 2 << 61                                     -> 0x4000000000000000
  // sum                                                                      =  0x4000404000010040
  EXPECT_EQ(make_kmajor_sw128_desc(0x400).pack(), 0x4000404000010040ull);
}

TEST(Sm100SmemDesc, KmajorSwizzle128KStepsAdvanceTheStartField) {
  // A stage at 0x1C400 (113 KiB + 0, 1024-aligned): start encode 0x1C40 -> 0x4000404000011C40.
  EXPECT_EQ(make_kmajor_sw128_desc(0x1C400).pack(), 0x4000404000011C40ull);
  // The MMA for K step j (64 FP4 = 32 bytes) starts 32*j bytes later: encode + 2*j.
  for (uint32_t j = 0; j < 4; ++j)
    EXPECT_EQ(make_kmajor_sw128_desc(0x1C400 + 32 * j).pack(), 0x4000404000011C40ull + 2 * j) << j;
}

TEST(Sm100SmemDesc, ScaleAtomSource) {
  // tcgen05.cp 32x128b source, atom at 0x1A800:
  //   start encode 0x1A80                          -> 0x0000000000001A80
  //   LBO 16 bytes (unused by one 16-byte column; encode 1, as CUTLASS) -> 1 << 16 = 0x10000
  //   SBO 128 bytes (8 rows x 16 B): encode 8      -> 8 << 32 = 0x0000000800000000
  //   bits 46-48 = 0b001                           -> 0x0000400000000000
  //   swizzle none (0)
  //   sum                                          =  0x0000400800011A80
  EXPECT_EQ(make_scale_atom_desc(0x1A800).pack(), 0x0000400800011A80ull);
  EXPECT_EQ(make_scale_atom_desc(0x1A800).lbo_bytes, 16u);
}

TEST(Sm100SmemDesc, EachFieldLandsOnItsBits) {
  const uint64_t fixed = uint64_t{1} << 46;  // bits 46-48 = 0b001 in every descriptor
  SmemDesc z;
  EXPECT_EQ(z.pack(), fixed);
  SmemDesc d;
  d.start_addr = 0x3FFF0;  // largest encodable: 14 bits after >> 4
  EXPECT_EQ(d.pack(), fixed | 0x0000000000003FFFull);
  d = SmemDesc{};
  d.lbo_bytes = 0x3FFF0;
  EXPECT_EQ(d.pack(), fixed | 0x000000003FFF0000ull);
  d = SmemDesc{};
  d.sbo_bytes = 0x3FFF0;
  EXPECT_EQ(d.pack(), fixed | 0x00003FFF00000000ull);
  d = SmemDesc{};
  d.base_offset = 7;  // bits 49-51
  EXPECT_EQ(d.pack(), fixed | 0x000E000000000000ull);
  d = SmemDesc{};
  d.lbo_absolute = 1;  // bit 52
  EXPECT_EQ(d.pack(), fixed | 0x0010000000000000ull);
  // Swizzle codes of Table 40: none 0, 128B-with-32B-atoms 1, 128B 2, 64B 4, 32B 6 (bits 61-63).
  const std::pair<SmemSwizzle, uint64_t> sw[] = {{SmemSwizzle::None, 0},
                                                 {SmemSwizzle::B128Atom32, 0x2000000000000000ull},
                                                 {SmemSwizzle::B128, 0x4000000000000000ull},
                                                 {SmemSwizzle::B64, 0x8000000000000000ull},
                                                 {SmemSwizzle::B32, 0xC000000000000000ull}};
  for (const auto& [mode, bits] : sw) {
    d = SmemDesc{};
    d.swizzle = mode;
    EXPECT_EQ(d.pack(), fixed | bits) << static_cast<int>(mode);
  }
}

TEST(Sm100SmemDesc, EncodeKeepsEighteenAddressBits) {
  // matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
  EXPECT_EQ(desc_encode(0x3FFFF), 0x3FFFu);
  EXPECT_EQ(desc_encode(0x40010), 1u);
  EXPECT_EQ(desc_encode(0x1F), 1u);
}

TEST(Sm100SmemDesc, UnpackInvertsPackAndFixedBitsHold) {
  SmemDesc d = make_kmajor_sw128_desc(0x2C400);
  d.base_offset = 3;
  const uint64_t v = d.pack();
  const SmemDesc e = SmemDesc::unpack(v);
  EXPECT_EQ(e.start_addr, 0x2C400u);
  EXPECT_EQ(e.lbo_bytes, 16u);
  EXPECT_EQ(e.sbo_bytes, 1024u);
  EXPECT_EQ(e.base_offset, 3u);
  EXPECT_EQ(e.swizzle, SmemSwizzle::B128);
  EXPECT_EQ(e.pack(), v);
  EXPECT_TRUE(SmemDesc::fixed_bits_ok(v));
  EXPECT_FALSE(SmemDesc::fixed_bits_ok(v & ~(uint64_t{1} << 46)));
}

// ---- TMA tensor-map parameters ----------------------------------------------------------------

TEST(Sm100TensorMap, OperandMapOfTheLargestBenchmarkShape) {
  // A of 128 x 16384 (K) x 1: bytes [1, 128, 8192] -> dims {8192, 128, 1} innermost first,
  // row stride 8192 bytes, batch stride 128 * 8192 = 1048576; 128 x 128 byte boxes, swizzle 128B.
  const TensorMapParams a = make_operand_map_params(128, 16384, 1, kBlockM);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.dtype, TmaDataType::U8);
  EXPECT_EQ(a.dims[0], 8192u);
  EXPECT_EQ(a.dims[1], 128u);
  EXPECT_EQ(a.dims[2], 1u);
  EXPECT_EQ(a.strides_bytes[0], 8192u);
  EXPECT_EQ(a.strides_bytes[1], 1048576u);
  EXPECT_EQ(a.box[0], 128u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.box[2], 1u);
  EXPECT_EQ(a.swizzle, TmaSwizzle::B128);
  EXPECT_EQ(a.box_bytes(), static_cast<uint32_t>(kAStageBytes));
  EXPECT_EQ(a.check(), nullptr);
  const TensorMapParams b = make_operand_map_params(7168, 16384, 1, kBlockN);
  EXPECT_EQ(b.dims[1], 7168u);
  EXPECT_EQ(b.strides_bytes[1], 7168u * 8192u);
  EXPECT_EQ(b.box_bytes(), static_cast<uint32_t>(kBStageBytes));
  EXPECT_EQ(b.check(), nullptr);
}

TEST(Sm100TensorMap, OperandBoxStartsAtTheTileBytes) {
  // The producer loads box (kt * 128, m_tile * 128, batch); its first byte must be element
  // (row m_tile*128, k = kt*256) of batch in the [L, M, K/2] layout.
  const int64_t m = 300, k = 1024, l = 3;
  const TensorMapParams p = make_operand_map_params(m, k, l, kBlockM);
  for (int64_t batch = 0; batch < l; ++batch)
    for (int64_t mt = 0; mt * kBlockM < m; ++mt)
      for (int64_t kt = 0; kt < k / kBlockK; ++kt) {
        const uint64_t at =
            kt * kBlockKBytes + mt * kBlockM * p.strides_bytes[0] + batch * p.strides_bytes[1];
        EXPECT_EQ(at,
                  static_cast<uint64_t>((batch * m + mt * kBlockM) * (k / 2) + kt * kBlockK / 2));
      }
}

TEST(Sm100TensorMap, ScaleMapOfTheLargestBenchmarkShape) {
  // SFA of M 128, K 16384: K/16 = 1024 scale columns -> Kp/4 = 256 atoms per 128-row block,
  // Rp/128 = 1 block: 32-bit words {128 per atom, 256 atoms, 1 block}, strides 512 and
  // 256 * 512 = 131072 bytes; box {128, 4, 1} = 4 atoms = 2048 bytes, no swizzle.
  const TensorMapParams s = make_scale_map_params(128, 16384, 1);
  EXPECT_EQ(s.dtype, TmaDataType::U32);
  EXPECT_EQ(s.dims[0], 128u);
  EXPECT_EQ(s.dims[1], 256u);
  EXPECT_EQ(s.dims[2], 1u);
  EXPECT_EQ(s.strides_bytes[0], 512u);
  EXPECT_EQ(s.strides_bytes[1], 131072u);
  EXPECT_EQ(s.box[0], 128u);
  EXPECT_EQ(s.box[1], 4u);
  EXPECT_EQ(s.swizzle, TmaSwizzle::None);
  EXPECT_EQ(s.box_bytes(), static_cast<uint32_t>(kSfStageBytes));
  EXPECT_EQ(s.check(), nullptr);
}

TEST(Sm100TensorMap, ScaleBoxHoldsExactlyTheTilesScales) {
  // The producer loads box (0, kt * 4, batch * m_tiles + m_tile). Its 2048 bytes must hold the
  // blocked scales of every (row, k block) of that 128 x 256 tile, per ScaleLayout (the tool's
  // one definition of the layout), including padding rows past M.
  const int64_t m = 200, k = 512, l = 3;  // Rp = 256 (2 blocks), Kb = 32, Kp/4 = 8 atoms
  const TensorMapParams p = make_scale_map_params(m, k, l);
  EXPECT_EQ(p.dims[1], 8u);
  EXPECT_EQ(p.dims[2], 6u);  // 2 row blocks x 3 batches
  EXPECT_EQ(p.strides_bytes[1], 4096u);
  const ScaleLayout lay = ScaleLayout::make(m, k, l);
  const int64_t m_tiles = lay.rows_padded() / kBlockM;
  for (int64_t batch = 0; batch < l; ++batch)
    for (int64_t mt = 0; mt < m_tiles; ++mt)
      for (int64_t kt = 0; kt < k / kBlockK; ++kt) {
        const int64_t start = static_cast<int64_t>((kt * kMmasPerStage) * p.strides_bytes[0] +
                                                   (batch * m_tiles + mt) * p.strides_bytes[1]);
        std::set<int64_t> seen;
        for (int64_t r = mt * kBlockM; r < (mt + 1) * kBlockM; ++r)
          for (int64_t c = kt * kBlockK / kBlockSize; c < (kt + 1) * kBlockK / kBlockSize; ++c) {
            const int64_t off = lay.blocked_offset(r, c, batch);
            ASSERT_GE(off, start);
            ASSERT_LT(off, start + kSfStageBytes);
            seen.insert(off);
          }
        EXPECT_EQ(seen.size(), static_cast<size_t>(kSfStageBytes));  // the box is all scales
      }
}

TEST(Sm100TensorMap, CheckNamesBrokenRules) {
  // K = 16: 8-byte rows, not a multiple of 16 bytes.
  EXPECT_STREQ(make_operand_map_params(128, 16, 1, 128).check(),
               "global strides must be multiples of 16 bytes");
  TensorMapParams p = make_operand_map_params(128, 1024, 1, 128);
  p.box[0] = 256;  // 256-byte inner box under a 128-byte swizzle
  EXPECT_STREQ(p.check(), "the inner box must not exceed the swizzle span");
  p = make_operand_map_params(128, 1024, 1, 128);
  p.box[1] = 300;
  EXPECT_STREQ(p.check(), "each box dim must be in [1, 256]");
  p = make_scale_map_params(128, 1024, 1);
  p.box[0] = 3;  // 12 bytes
  EXPECT_STREQ(p.check(), "the inner box must be a multiple of 16 bytes");
}

// ---- kernel geometry ------------------------------------------------------------------------

TEST(Sm100Geometry, StagesAndTensorMemoryFit) {
  EXPECT_EQ(kStageBytes, 16384 + 16384 + 2048 + 2048);
  EXPECT_LE(kSmemBytes, 232448);  // 227 KiB per block on sm_100
  EXPECT_EQ(kMmasPerStage * kMmaK, kBlockK);
  // TMEM columns: accumulators [0, 256), stage s scales [256 + 32 s, 256 + 32 s + 32).
  for (int s = 0; s < kStages; ++s) {
    const int first = kSfColBase + s * kSfColsPerStage;
    EXPECT_GE(first, kAccBuffers * kBlockN);
    EXPECT_LE(first + kSfColsPerStage, kTmemCols);
  }
  EXPECT_EQ(kTmemCols & (kTmemCols - 1), 0);  // power of two
  EXPECT_GE(kTmemCols, 32);
}

// ---- schedule -------------------------------------------------------------------------------

TEST(Sm100Schedule, BenchmarkShapesOnA148SmB200) {
  const WorkPlan a = make_plan(128, 7168, 16384, 1, 148);
  EXPECT_EQ(a.tiles(), 56);
  EXPECT_EQ(a.k_tiles, 64);
  EXPECT_EQ(a.splits, 2);  // 148 / 56
  const WorkPlan b = make_plan(128, 4096, 7168, 1, 148);
  EXPECT_EQ(b.tiles(), 32);
  EXPECT_EQ(b.k_tiles, 28);
  EXPECT_EQ(b.splits, 4);  // 148 / 32
  const WorkPlan c = make_plan(128, 7168, 2048, 1, 148);
  EXPECT_EQ(c.k_tiles, 8);
  EXPECT_EQ(c.splits, 2);
  EXPECT_EQ(make_plan(2304, 4608, 7168, 1, 148).splits, 1);  // 648 tiles fill the GPU
  EXPECT_EQ(make_plan(128, 256, 256, 1, 148).splits, 1);     // a single K tile
  EXPECT_EQ(make_plan(128, 128, 1 << 20, 1, 148).splits, kMaxSplits);
}

TEST(Sm100Schedule, UnitsCoverEveryTileAndKTileOnce) {
  const int shapes[][4] = {{128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1},
                           {300, 96, 768, 3},     {128, 256, 256, 1},   {512, 1536, 7168, 2}};
  for (const auto& s : shapes) {
    const WorkPlan p = make_plan(s[0], s[1], s[2], s[3], 148);
    std::vector<int> hits(static_cast<size_t>(p.tiles()) * p.k_tiles, 0);
    for (int u = 0; u < p.units(); ++u) {
      const WorkUnit w = decode_unit(p, u);
      ASSERT_LT(w.k_begin, w.k_end) << "empty split";
      ASSERT_GE(w.m_tile, 0);
      ASSERT_LT(w.m_tile, p.m_tiles);
      ASSERT_LT(w.n_tile, p.n_tiles);
      ASSERT_LT(w.batch, p.batches);
      EXPECT_EQ(w.tile, (w.batch * p.m_tiles + w.m_tile) * p.n_tiles + w.n_tile);
      for (int kt = w.k_begin; kt < w.k_end; ++kt)
        ++hits[static_cast<size_t>(w.tile) * p.k_tiles + kt];
    }
    for (int h : hits) EXPECT_EQ(h, 1);
  }
}
