// Typed descriptors of the sm_100a NVFP4 kernel: the tcgen05 instruction descriptor for
// kind::mxf4nvf4 with block scaling, the shared-memory matrix descriptor, and the parameters of
// the TMA tensor maps. Each is a value with named fields that packs to the exact bit pattern
// the hardware reads; tests/unit/sm100_desc_test.cpp checks them bit for bit against the PTX ISA
// tables (PTX ISA 9.x, section 9.7.16.4 "Matrix Descriptors"). Header-only, g++ and nvcc.
#pragma once

#include <cstdint>

#include "kernels/sm100/plant.hpp"
#include "src/format/nvfp4.hpp"  // NVFP4_HD, ScaleLayout, kAtomBytes

namespace nvfp4 {
namespace sm100 {

// ---------------------------------------------------------------------------------------------
// Instruction descriptor, .kind::mxf4 / .kind::mxf4nvf4 (PTX ISA Table 44):
//   bits 0-1 reserved, 2 sparsity, 3 reserved, 4-5 scale factor B id, 6 reserved,
//   7-9 atype (E2M1 = 1), 10-11 btype (E2M1 = 1), 12 reserved, 13/14 negate A/B,
//   15/16 transpose A/B (must be 0: both K-major), 17-22 N >> 3, 23 scale type
//   (UE4M3 = 0, UE8M0 = 1), 24-26 reserved, 27-28 M >> 7, 29-30 scale factor A id,
//   31 K dimension (0: dense K = 64).

enum class ScaleType : uint32_t { UE4M3 = 0, UE8M0 = 1 };
constexpr uint32_t kTypeE2M1 = 1;  // atype/btype code of E2M1 for the mxf4 kinds

NVFP4_SM100_PLANT_NS_BEGIN
struct InstrDescBlockScaled {
  uint32_t sparse = 0;                      // bit 2
  uint32_t sfb_id = 0;                      // bits 4-5 (0 for scale_vec::4X)
  uint32_t a_type = kTypeE2M1;              // bits 7-9
  uint32_t b_type = kTypeE2M1;              // bits 10-11
  uint32_t negate_a = 0;                    // bit 13
  uint32_t negate_b = 0;                    // bit 14
  uint32_t transpose_a = 0;                 // bit 15
  uint32_t transpose_b = 0;                 // bit 16
  uint32_t n_shr3 = 0;                      // bits 17-22: N >> 3
  ScaleType scale_type = ScaleType::UE4M3;  // bit 23
  uint32_t m_shr7 = 0;                      // bits 27-28: M >> 7
  uint32_t sfa_id = 0;                      // bits 29-30 (0 for scale_vec::4X)
  uint32_t k_dim = 0;                       // bit 31: 0 = dense K 64

  NVFP4_HD InstrDescBlockScaled& set_m(uint32_t m) {
    m_shr7 = m >> 7;
    return *this;
  }
  NVFP4_HD InstrDescBlockScaled& set_n(uint32_t n) {
    n_shr3 = n >> 3;
    return *this;
  }
  NVFP4_HD uint32_t m() const { return m_shr7 << 7; }
  NVFP4_HD uint32_t n() const { return n_shr3 << 3; }

  // Bits 27-28 (a planted bug moves them to the reserved bits 24-25, in pack and unpack alike).
  static constexpr uint32_t kMShift = planted(KernelPlant::InstrDescFieldMoved) ? 24 : 27;

  NVFP4_HD uint32_t pack() const {
    return ((sparse & 1u) << 2) | ((sfb_id & 3u) << 4) | ((a_type & 7u) << 7) |
           ((b_type & 3u) << 10) | ((negate_a & 1u) << 13) | ((negate_b & 1u) << 14) |
           ((transpose_a & 1u) << 15) | ((transpose_b & 1u) << 16) | ((n_shr3 & 63u) << 17) |
           ((static_cast<uint32_t>(scale_type) & 1u) << 23) | ((m_shr7 & 3u) << kMShift) |
           ((sfa_id & 3u) << 29) | ((k_dim & 1u) << 31);
  }
  NVFP4_HD static InstrDescBlockScaled unpack(uint32_t v) {
    InstrDescBlockScaled d;
    d.sparse = (v >> 2) & 1u;
    d.sfb_id = (v >> 4) & 3u;
    d.a_type = (v >> 7) & 7u;
    d.b_type = (v >> 10) & 3u;
    d.negate_a = (v >> 13) & 1u;
    d.negate_b = (v >> 14) & 1u;
    d.transpose_a = (v >> 15) & 1u;
    d.transpose_b = (v >> 16) & 1u;
    d.n_shr3 = (v >> 17) & 63u;
    d.scale_type = static_cast<ScaleType>((v >> 23) & 1u);
    d.m_shr7 = (v >> kMShift) & 3u;
    d.sfa_id = (v >> 29) & 3u;
    d.k_dim = (v >> 31) & 1u;
    return d;
  }
  // Empty when the fields describe a legal dense NVFP4 MMA of this kernel's family, else the
  // rule broken. cta_group::1 allows M = 128 (M = 64 does not exist for FP4); N % 16 for M 128.
  NVFP4_HD const char* check() const {
    if (a_type != kTypeE2M1 || b_type != kTypeE2M1) return "atype/btype must be E2M1 (1)";
    if (transpose_a || transpose_b) return "FP4 operands must be K-major (transpose bits 0)";
    if (m() != 128 && m() != 256) return "M must be 128 (cta_group::1) or 256 (cta_group::2)";
    if (n() < 16 || n() > 256 || n() % 16 != 0) return "N must be a multiple of 16 in [16, 256]";
    if (scale_type == ScaleType::UE4M3 && (sfa_id != 0 || sfb_id != 0))
      return "scale_vec::4X (UE4M3, block 16) needs scale factor ids 0";
    if (sparse) return "sparse MMA is not used";
    return nullptr;
  }
};

// The descriptor of this kernel's MMA: E2M1 x E2M1, UE4M3 scales every 16 elements, K-major.
NVFP4_HD InstrDescBlockScaled make_nvfp4_instr_desc(uint32_t m, uint32_t n) {
  InstrDescBlockScaled d;
  d.set_m(m).set_n(n);
  return d;
}
NVFP4_SM100_PLANT_NS_END

// ---------------------------------------------------------------------------------------------
// Shared memory matrix descriptor (PTX ISA Table 40), 64 bits:
//   0-13 start address >> 4, 16-29 leading dimension byte offset >> 4, 32-45 stride dimension
//   byte offset >> 4, 46-48 fixed 0b001, 49-51 matrix base offset, 52 leading dimension mode
//   (0 relative), 53-60 fixed 0, 61-63 swizzle (0 none, 1 128B with 32B atoms, 2 128B,
//   4 64B, 6 32B). Each address field is matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4.

enum class SmemSwizzle : uint32_t { None = 0, B128Atom32 = 1, B128 = 2, B64 = 4, B32 = 6 };

NVFP4_HD uint64_t desc_encode(uint32_t bytes) { return (bytes & 0x3FFFFu) >> 4; }

struct SmemDesc {
  uint32_t start_addr = 0;    // shared-memory byte address (16-byte aligned)
  uint32_t lbo_bytes = 0;     // leading dimension byte offset
  uint32_t sbo_bytes = 0;     // stride dimension byte offset
  uint32_t base_offset = 0;   // bits 49-51: 0 when the swizzle pattern starts aligned
  uint32_t lbo_absolute = 0;  // bit 52
  SmemSwizzle swizzle = SmemSwizzle::None;

  NVFP4_HD uint64_t pack() const {
    return desc_encode(start_addr) | (desc_encode(lbo_bytes) << 16) |
           (desc_encode(sbo_bytes) << 32) | (uint64_t{1} << 46) |
           (uint64_t{base_offset & 7u} << 49) | (uint64_t{lbo_absolute & 1u} << 52) |
           (uint64_t{static_cast<uint32_t>(swizzle) & 7u} << 61);
  }
  NVFP4_HD static SmemDesc unpack(uint64_t v) {
    SmemDesc d;
    d.start_addr = static_cast<uint32_t>(v & 0x3FFFu) << 4;
    d.lbo_bytes = static_cast<uint32_t>((v >> 16) & 0x3FFFu) << 4;
    d.sbo_bytes = static_cast<uint32_t>((v >> 32) & 0x3FFFu) << 4;
    d.base_offset = static_cast<uint32_t>((v >> 49) & 7u);
    d.lbo_absolute = static_cast<uint32_t>((v >> 52) & 1u);
    d.swizzle = static_cast<SmemSwizzle>((v >> 61) & 7u);
    return d;
  }
  // The fixed bits 46-48 read back as 0b001 and 53-60 as zero in every packed descriptor.
  NVFP4_HD static bool fixed_bits_ok(uint64_t v) {
    return ((v >> 46) & 7u) == 1u && ((v >> 53) & 0xFFu) == 0u && ((v >> 14) & 3u) == 0u &&
           ((v >> 30) & 3u) == 0u;
  }
};

// A K-major operand tile written by TMA with 128-byte swizzle: each row is 128 bytes (256 FP4
// values), 8-row core-matrix groups are 1024 bytes apart (SBO). LBO is unused for swizzled
// K-major layouts and is "assumed 1" (PTX ISA 9.7.16.3.3 examples), so it encodes as 1.
// The tile must start on a 1024-byte boundary so the base offset is 0.
NVFP4_HD SmemDesc make_kmajor_sw128_desc(uint32_t smem_addr) {
  SmemDesc d;
  d.start_addr = smem_addr;
  d.lbo_bytes = 16;
  d.sbo_bytes = 1024;
  d.swizzle = SmemSwizzle::B128;
  return d;
}

// The source of tcgen05.cp.32x128b: one 512-byte blocked scale atom seen as 32 rows of 16
// bytes, unswizzled; 8-row groups are 128 bytes apart. LBO is unused by a one-column (16-byte)
// copy; it encodes 16 bytes (field value 1), as CUTLASS's scale-copy descriptors do, so the
// descriptor is identical bit for bit to the one known to work.
NVFP4_HD SmemDesc make_scale_atom_desc(uint32_t smem_addr) {
  SmemDesc d;
  d.start_addr = smem_addr;
  d.lbo_bytes = 16;
  d.sbo_bytes = 128;
  d.swizzle = SmemSwizzle::None;
  return d;
}

// ---------------------------------------------------------------------------------------------
// TMA tensor-map parameters, before cuTensorMapEncodeTiled turns them into a CUtensorMap.
// The enums carry the CUDA driver's values (static_assert-ed against cuda.h where encoded).

enum class TmaDataType : uint32_t { U8 = 0, U16 = 1, U32 = 2 };
enum class TmaSwizzle : uint32_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };

NVFP4_HD uint32_t tma_elem_bytes(TmaDataType t) {
  return t == TmaDataType::U8 ? 1u : t == TmaDataType::U16 ? 2u : 4u;
}
NVFP4_HD uint32_t tma_swizzle_span(TmaSwizzle s) {
  return s == TmaSwizzle::B32    ? 32u
         : s == TmaSwizzle::B64  ? 64u
         : s == TmaSwizzle::B128 ? 128u
                                 : 0u;
}

struct TensorMapParams {
  uint32_t rank = 0;
  TmaDataType dtype = TmaDataType::U8;
  uint64_t dims[5] = {0, 0, 0, 0, 0};        // elements, innermost first
  uint64_t strides_bytes[4] = {0, 0, 0, 0};  // byte stride of dims[1..rank-1]
  uint32_t box[5] = {1, 1, 1, 1, 1};         // elements per copy along each dim
  uint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  TmaSwizzle swizzle = TmaSwizzle::None;

  NVFP4_HD uint32_t box_bytes() const {
    uint32_t b = tma_elem_bytes(dtype);
    for (uint32_t i = 0; i < rank; ++i) b *= box[i];
    return b;
  }
  // The rules cuTensorMapEncodeTiled enforces (CUDA driver API reference), so a bad map is
  // reported with its reason before the driver's bare CUDA_ERROR_INVALID_VALUE.
  NVFP4_HD const char* check() const {
    if (rank < 1 || rank > 5) return "rank must be 1..5";
    for (uint32_t i = 0; i < rank; ++i) {
      if (dims[i] == 0 || dims[i] > (uint64_t{1} << 32)) return "each dim must be in [1, 2^32]";
      if (box[i] == 0 || box[i] > 256) return "each box dim must be in [1, 256]";
      if (elem_strides[i] == 0 || elem_strides[i] > 8) return "element strides must be 1..8";
    }
    for (uint32_t i = 0; i + 1 < rank; ++i) {
      if (strides_bytes[i] % 16 != 0) return "global strides must be multiples of 16 bytes";
      if (strides_bytes[i] >= (uint64_t{1} << 40)) return "global strides must be below 2^40";
    }
    const uint32_t inner = box[0] * tma_elem_bytes(dtype);
    if (inner % 16 != 0) return "the inner box must be a multiple of 16 bytes";
    if (swizzle != TmaSwizzle::None && inner > tma_swizzle_span(swizzle))
      return "the inner box must not exceed the swizzle span";
    return nullptr;
  }
};

// ---------------------------------------------------------------------------------------------
// Kernel geometry, shared by the host launcher, the device code and the tests.

constexpr int kBlockM = 128;  // UMMA M (cta_group::1)
constexpr int kBlockN = 128;  // UMMA N: one 128-row scale atom of B per MMA
constexpr int kBlockK = 256;  // FP4 elements per stage = one 128-byte swizzled row
constexpr int kBlockKBytes = kBlockK / 2;
constexpr int kMmaK = 64;  // K of one tcgen05.mma kind::mxf4nvf4 (dense)
constexpr int kMmasPerStage = kBlockK / kMmaK;
constexpr int kStages = 6;
constexpr int kAStageBytes = kBlockM * kBlockKBytes;       // 16 KiB
constexpr int kBStageBytes = kBlockN * kBlockKBytes;       // 16 KiB
constexpr int kSfStageBytes = kMmasPerStage * kAtomBytes;  // 4 atoms = 2 KiB
constexpr int kStageBytes = kAStageBytes + kBStageBytes + 2 * kSfStageBytes;

// Tensor memory plan (512 columns x 128 lanes of 32 bits): two FP32 accumulators of kBlockN
// columns, then per stage 16 columns of A scales and 16 of B scales (4 per MMA: one
// 32x128b.warpx4 copy of a 512-byte atom fills 4 columns on all 128 lanes).
constexpr int kAccBuffers = 2;
constexpr int kSfColsPerMma = 4;
constexpr int kSfaColsPerStage = kMmasPerStage * kSfColsPerMma;
constexpr int kSfColBase = kAccBuffers * kBlockN;                      // 256
constexpr int kSfColsPerStage = 2 * kSfaColsPerStage;                  // 32
constexpr int kTmemColsUsed = kSfColBase + kStages * kSfColsPerStage;  // 448
constexpr int kTmemCols = 512;  // allocation: a power of two in [32, 512]
static_assert(kTmemColsUsed <= kTmemCols, "tensor memory plan exceeds 512 columns");

// Warp roles: 0 TMA producer, 1 MMA issuer (and TMEM owner), 2..5 epilogue (one per TMEM
// lane quarter: warp w may only touch lanes 32*(w%4)..+31).
constexpr int kEpilogueWarps = 4;
constexpr int kThreads = 32 * (2 + kEpilogueWarps);

// Dynamic shared memory: 1024 bytes of alignment slack (128B-swizzled tiles need 1024-byte
// aligned bases), the stages, then barriers and two words.
constexpr int kBarrierBytes = 8 * (2 * kStages + 2 * kAccBuffers) + 16;
constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kBarrierBytes;
static_assert(kSmemBytes <= 232448, "exceeds the 227 KiB of shared memory a B200 block may use");

// TMA maps for the kernel's operands. A (or B) is [L, rows, K/2] bytes, K-major: a 3-D byte
// tensor {K/2, rows, L}, read as 128-byte x box_rows boxes with 128-byte swizzle.
NVFP4_HD TensorMapParams make_operand_map_params(int64_t rows, int64_t k, int64_t batches,
                                                 uint32_t box_rows) {
  TensorMapParams p;
  p.rank = 3;
  p.dtype = TmaDataType::U8;
  p.dims[0] = static_cast<uint64_t>(k / 2);
  p.dims[1] = static_cast<uint64_t>(rows);
  p.dims[2] = static_cast<uint64_t>(batches);
  p.strides_bytes[0] = static_cast<uint64_t>(k / 2);
  p.strides_bytes[1] = static_cast<uint64_t>(rows * (k / 2));
  p.box[0] = kBlockKBytes;
  p.box[1] = box_rows;
  p.box[2] = 1;
  p.swizzle = TmaSwizzle::B128;
  return p;
}

// Blocked scales: 512-byte atoms (128 rows x 4 scales), Kp/4 atoms per 128-row block, blocks
// then batches. Seen as 32-bit words {128 per atom, Kp/4 atoms, (Rp/128)*L row blocks}; one
// box = the 4 consecutive atoms (2 KiB) covering a 128-row x 256-K tile.
NVFP4_HD TensorMapParams make_scale_map_params(int64_t rows, int64_t k, int64_t batches) {
  const ScaleLayout s = ScaleLayout::make(rows, k, batches);
  TensorMapParams p;
  p.rank = 3;
  p.dtype = TmaDataType::U32;
  p.dims[0] = kAtomBytes / 4;
  p.dims[1] = static_cast<uint64_t>(s.kblocks_padded() / kAtomCols);
  p.dims[2] = static_cast<uint64_t>(s.rows_padded() / kAtomRows * batches);
  p.strides_bytes[0] = kAtomBytes;
  p.strides_bytes[1] = static_cast<uint64_t>(s.kblocks_padded() / kAtomCols * kAtomBytes);
  p.box[0] = kAtomBytes / 4;
  p.box[1] = kMmasPerStage;
  p.box[2] = 1;
  p.swizzle = TmaSwizzle::None;
  return p;
}

// The four maps of one launch (A, B and their blocked scales), as the launcher encodes them.
struct KernelMapParams {
  TensorMapParams a, b, sfa, sfb;
};
NVFP4_HD KernelMapParams make_kernel_map_params(int64_t m, int64_t n, int64_t k, int64_t l) {
  return {make_operand_map_params(m, k, l, kBlockM), make_operand_map_params(n, k, l, kBlockN),
          make_scale_map_params(m, k, l), make_scale_map_params(n, k, l)};
}

}  // namespace sm100
}  // namespace nvfp4
