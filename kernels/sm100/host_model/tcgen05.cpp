// The host model's tensor-core pipe and tensor memory: tcgen05.alloc / relinquish / dealloc,
// tcgen05.cp 32x128b.warpx4, tcgen05.mma kind::mxf4nvf4 block_scale scale_vec::4X,
// tcgen05.commit and tcgen05.ld 32x32b.x32. See model.hpp.
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/sm100/host_model/cta.hpp"
#include "src/format/nvfp4.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {
namespace detail {

namespace {

// Tensor-memory addresses (PTX ISA 9.7.16.2.1): lane in bits 31-16, column in bits 15-0.
uint32_t lane_of(uint32_t taddr) { return taddr >> 16; }
uint32_t col_of(uint32_t taddr) { return taddr & 0xFFFFu; }

// The shared-memory byte that holds K-byte `kb` of row `row` of a K-major operand described
// by `d` (PTX ISA 9.7.16.4, Table 40, and the canonical layouts of 9.7.16.3.3): without
// swizzle, 8x16-byte core matrices, SBO apart along M and LBO apart along K; with 128-byte
// swizzle, 128-byte rows in 8-row atoms SBO apart, the address then swizzled by its own bits
// 4-6 ^ 7-9. The descriptor's start address may sit inside the atom (the K step); the
// swizzle is applied to the computed address, which needs base offset 0 (1024-byte aligned
// atoms). `k_step` other than Documented reads the start's offset inside the 128-byte row
// another way (model.hpp, KStep): a deliberately changed semantics for the bisect.
uint32_t operand_addr(const SmemDesc& d, uint32_t row, uint32_t kb,
                      KStep k_step = KStep::Documented) {
  if (d.swizzle == SmemSwizzle::B128) {
    const uint32_t step = k_step == KStep::Documented ? 0u : d.start_addr % 128;
    const uint32_t a = d.start_addr - step + (row / 8) * d.sbo_bytes + (row % 8) * 128 + kb;
    const uint32_t swizzled = a ^ (((a >> 7) & 7u) << 4);
    return k_step == KStep::SwizzleBeforeStep ? swizzled + step : swizzled;
  }
  return d.start_addr + (row / 8) * d.sbo_bytes + (kb / 16) * d.lbo_bytes + (row % 8) * 16 +
         kb % 16;
}

// The instruction descriptor of kind::mxf4nvf4 as the model reads it, field by field from the
// PTX ISA's table (docs/kernels.md, "The instruction descriptor"), independent of
// kernels/sm100/descriptors.hpp: a field moved there in pack() and unpack() alike still reads
// wrong here.
struct Idesc {
  uint32_t raw = 0;
  uint32_t m = 0, n = 0, a_type = 0, b_type = 0, scale_type = 0, sfa_id = 0, sfb_id = 0;
  bool sparse = false, transpose = false, dense_k = true;
  static uint32_t bits(uint32_t v, int lo, int n) { return (v >> lo) & ((1u << n) - 1u); }
  static Idesc read(uint32_t v) {
    Idesc d;
    d.raw = v;
    d.sparse = bits(v, 2, 1);
    d.sfb_id = bits(v, 4, 2);
    d.a_type = bits(v, 7, 3);
    d.b_type = bits(v, 10, 2);
    d.transpose = bits(v, 15, 2) != 0;
    d.n = bits(v, 17, 6) << 3;
    d.scale_type = bits(v, 23, 1);
    d.m = bits(v, 27, 2) << 7;
    d.sfa_id = bits(v, 29, 2);
    d.dense_k = bits(v, 31, 1) == 0;
    return d;
  }
  // Empty when legal for this kernel's MMA (cta_group::1, E2M1 x E2M1, UE4M3 block16, dense).
  std::string error() const {
    const uint32_t reserved = bits(raw, 0, 2) | bits(raw, 3, 1) | bits(raw, 6, 1) |
                              bits(raw, 12, 1) | bits(raw, 24, 3);
    if (reserved) return fmt::format("reserved bits set ({:#010x}: bits 0-1, 3, 6, 12, 24-26 must be 0)", raw);
    if (m != 128) return fmt::format("M = {} (bits 27-28), but cta_group::1 needs M = 128", m);
    if (n < 16 || n > 256 || n % 16) return fmt::format("N = {} (bits 17-22) not a multiple of 16 in [16, 256]", n);
    if (a_type != 1 || b_type != 1) return "atype/btype (bits 7-9, 10-11) not E2M1 (1)";
    if (scale_type != 0) return "scale type (bit 23) not UE4M3 (0)";
    if (sfa_id || sfb_id) return "scale factor ids (bits 29-30, 4-5) not 0 for block16";
    if (sparse || transpose || !dense_k) return "sparse, transposed or non-dense K bits set";
    return {};
  }
};

// Checks a shared-memory operand descriptor; empty when the model can read it.
std::string desc_error(uint64_t raw, const SmemDesc& d) {
  if (!SmemDesc::fixed_bits_ok(raw)) return "fixed bits (46-48 = 0b001) wrong";
  if (d.swizzle != SmemSwizzle::B128 && d.swizzle != SmemSwizzle::None)
    return fmt::format("swizzle mode {} not modelled", static_cast<uint32_t>(d.swizzle));
  if (d.base_offset != 0) return "base offset != 0 not modelled";
  // The matrix descriptor's base offset (PTX ISA 9.7.16.4.1) is 0 only when the swizzle
  // pattern starts at the 1024-byte atom: the start address may advance along the 128-byte row
  // (the K step) but must lie in row 0 of a 1024-byte aligned atom.
  if (d.swizzle == SmemSwizzle::B128 && (d.start_addr & 0x380u) != 0)
    return fmt::format("start address {:#x} lies in row {} of its 128B swizzle atom; with base "
                       "offset 0 it must lie in row 0 of a 1024-byte aligned atom",
                       d.start_addr, (d.start_addr >> 7) & 7u);
  if (d.lbo_absolute) return "absolute LBO mode not modelled";
  if (d.swizzle == SmemSwizzle::B128 && (d.start_addr % 128) + 32 > 128)
    return "a 32-byte K step crosses the 128-byte swizzle row";
  return {};
}

void add_range(std::vector<Range>& v, uint32_t lo, uint32_t hi) {
  if (!v.empty() && v.back().hi >= lo && v.back().lo <= lo) {
    if (hi > v.back().hi) v.back().hi = hi;
    return;
  }
  v.push_back({lo, hi});
}

}  // namespace

void Cta::check_tc_issue(const TcOp& op, const char* what) {
  for (const auto& s : op.smem) {
    if (!in_window(s.lo, s.hi - s.lo))
      finding(fmt::format("{} reads outside shared memory ({:#x})", what, s.lo));
    for (const auto& t : tma_ops)
      if (t.range().overlaps(s))
        finding(fmt::format("{} reads shared memory {:#x} that a TMA load has not finished "
                            "writing",
                            what, t.dst));
  }
  // tcgen05.mma -> tcgen05.cp is not an ordered pair (PTX ISA 9.7.16.6.2; cp -> mma is): a
  // copy into columns that a queued MMA reads or writes may land before that MMA runs.
  if (op.kind == TcOp::Cp)
    for (const auto& q : tc_ops) {
      if (q.kind != TcOp::Mma) continue;
      bool hit = q.cols_written.overlaps(op.cols_written);
      for (const auto& r : q.cols_read) hit |= r.overlaps(op.cols_written);
      if (hit)
        finding(fmt::format("tcgen05.cp into tensor-memory columns {}-{} that a queued "
                            "tcgen05.mma still uses",
                            op.cols_written.lo, op.cols_written.hi - 1));
    }
}

void Cta::execute_tc(const TcOp& op) {
  if (op.kind == TcOp::Commit) {
    arrivals.push_back(op.bar);
    return;
  }
  if (op.kind == TcOp::Cp) {
    // tcgen05.cp .32x128b .warpx4 (PTX ISA 9.7.16.2.3 shapes, tcgen05.cp): 32 rows of 128 bits
    // from a no-swizzle matrix (row r at start + (r/8)*SBO + (r%8)*16) to 32 lanes x 4
    // columns, multicast to each of the four 32-lane quarters.
    const SmemDesc d = SmemDesc::unpack(op.a);
    const ScaleCopy sem = cfg.semantics.scale_copy;
    for (uint32_t r = 0; r < 32; ++r) {
      const uint32_t src = d.start_addr + (r / 8) * d.sbo_bytes + (r % 8) * 16;
      if (src + 16 > kWindowBytes || op.d + 4 > kTmemColumns) continue;  // reported at issue
      const uint32_t lane = sem == ScaleCopy::RowsInterleaved ? 4 * (r % 8) + r / 8 : r;
      for (uint32_t w = 0; w < 4; ++w) {
        uint32_t word;
        std::memcpy(&word, window + src + 4 * w, 4);
        for (uint32_t q = 0; q < (sem == ScaleCopy::NoMulticast ? 1u : 4u); ++q)
          tmem_at(q * 32 + lane, op.d + w) = word;
      }
    }
    return;
  }
  // tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X (PTX ISA 9.7.16.10):
  // D[M x N] (+)= sum over K = 64 of (A[m][k] * SFA[m][k/16]) * (B[n][k] * SFB[n][k/16]), A and
  // B E2M1 from shared memory, UE4M3 scales from tensor memory, D FP32 in lanes 0..M-1,
  // columns d..d+N-1. Scale placement for M = 128 (9.7.16.10.7, scale_vec::4X): scale k/16 of
  // row m is byte k/16 of lane m, column sf + m/32 - the 32-lane x 4-column block that the
  // warpx4 copy of one blocked 512-byte atom puts into every lane quarter. The model sums each
  // instruction's 64 products exactly (double) and rounds once into the FP32 accumulator.
  const Idesc id = Idesc::read(op.idesc);
  const uint32_t M = id.m, N = id.n;
  const SmemDesc a = SmemDesc::unpack(op.a), b = SmemDesc::unpack(op.b);
  std::vector<float> fa(static_cast<size_t>(M) * 64), fb(static_cast<size_t>(N) * 64);
  const Semantics& sem = cfg.semantics;
  auto decode = [&](const SmemDesc& d, uint32_t rows, uint32_t sf, std::vector<float>& out) {
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t kb = 0; kb < 32; ++kb) {
        // Out-of-window addresses and columns were reported at issue; read them as zero here.
        const uint32_t ad = operand_addr(d, r, kb, sem.k_step);
        uint32_t col = sf + r / 32, sf_byte = kb / 8;  // K block kb/8 of this MMA's four
        if (sem.scale_placement == ScalePlacement::ColumnByteSwapped)
          col = sf + kb / 8, sf_byte = r / 32;
        else if (sem.scale_placement == ScalePlacement::BytesReversed)
          sf_byte = 3 - kb / 8;
        const uint8_t byte = ad < kWindowBytes ? window[ad] : 0;
        const uint32_t word = col < kTmemColumns ? tmem_at(r, col) : 0;
        const float s = scale_decode((word >> (8 * sf_byte)) & 0xFFu);
        out[r * 64 + 2 * kb] = e2m1_decode(byte & 0xFu) * s;
        out[r * 64 + 2 * kb + 1] = e2m1_decode(byte >> 4) * s;
      }
  };
  decode(a, M, op.sfa, fa);
  decode(b, N, op.sfb, fb);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t n = 0; n < N && op.d + n < kTmemColumns; ++n) {
      double s = 0;
      const float* x = &fa[m * 64];
      const float* y = &fb[n * 64];
      for (int k = 0; k < 64; ++k) s += static_cast<double>(x[k]) * y[k];
      uint32_t& cell = tmem_at(m, op.d + n);
      float acc;
      std::memcpy(&acc, &cell, 4);
      const float out = static_cast<float>((op.accumulate ? static_cast<double>(acc) : 0.0) + s);
      std::memcpy(&cell, &out, 4);
    }
}

}  // namespace detail

using detail::Cta;
using detail::Range;
using detail::TcOp;

namespace {
Cta& cta() { return *detail::current_cta(); }
int warp() { return detail::current_tid() / 32; }

void check_cols(Cta& c, const char* what, uint32_t taddr, uint32_t ncols) {
  if (detail::lane_of(taddr) != 0)
    c.finding(fmt::format("{}: tensor-memory address {:#x} has lane {}, expected 0", what, taddr,
                          detail::lane_of(taddr)));
  const uint32_t col = detail::col_of(taddr);
  if (!c.cols_allocated(col, col + ncols))
    c.finding(fmt::format("{}: columns {}-{} are not allocated", what, col, col + ncols - 1));
}
}  // namespace

// PTX ISA 9.7.16.7 (tcgen05.alloc, .relinquish_alloc_permit, .dealloc): warp-wide; the column
// count a power of two in [32, 512]; the address (lane 0, first column) written to shared
// memory; no allocation after relinquishing the permit; dealloc of exactly what was allocated.
void tmem_alloc(uint32_t dst, uint32_t cols) {
  Cta& c = cta();
  c.mu.lock();
  c.tc_issue("tcgen05.alloc");
  c.warp_meet(warp(), "tcgen05.alloc", cols, [&] {
    if (cols < 32 || cols > 512 || (cols & (cols - 1)) != 0)
      c.finding(fmt::format("tcgen05.alloc of {} columns: not a power of two in [32, 512]", cols));
    if (c.relinquished) c.finding("tcgen05.alloc after relinquish_alloc_permit");
    if (c.allocated) c.finding("a second tcgen05.alloc: this model's CTA holds all 512 columns");
    if (dst % 4 != 0 || !c.in_window(dst, 4))
      c.finding(fmt::format("tcgen05.alloc writes to {:#x}: not shared memory", dst));
    c.allocated = true;
    c.alloc_cols = cols;
    const uint32_t base = 0;
    std::memcpy(c.window + dst, &base, 4);
  });
  c.mu.unlock();
}

void tmem_relinquish() {
  Cta& c = cta();
  c.mu.lock();
  c.tc_issue("tcgen05.relinquish_alloc_permit");
  c.warp_meet(warp(), "tcgen05.relinquish_alloc_permit", 0, [&] { c.relinquished = true; });
  c.mu.unlock();
}

void tmem_dealloc(uint32_t taddr, uint32_t cols) {
  Cta& c = cta();
  c.mu.lock();
  c.tc_issue("tcgen05.dealloc");
  c.warp_meet(warp(), "tcgen05.dealloc", taddr, [&] {
    if (!c.allocated || c.deallocated) c.finding("tcgen05.dealloc without an allocation");
    if (taddr != 0 || cols != c.alloc_cols)
      c.finding(fmt::format("tcgen05.dealloc({:#x}, {}) of an allocation of {} columns at 0",
                            taddr, cols, c.alloc_cols));
    if (!c.tc_ops.empty() || !c.arrivals.empty() || c.tc_busy)
      c.finding(fmt::format("tcgen05.dealloc with {} tcgen05 operations and {} commit arrivals "
                            "outstanding",
                            c.tc_ops.size() + (c.tc_busy ? 1 : 0), c.arrivals.size()));
    c.deallocated = true;
  });
  c.mu.unlock();
}

void tmem_copy_scale_atom(uint32_t taddr, uint64_t sdesc) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.tc_issue("tcgen05.cp");
  const int64_t n = c.cp_issued++;
  if (c.cfg.plant == Plant::SkipScaleCopy && n % 8 == 7) return;
  SmemDesc d = SmemDesc::unpack(sdesc);
  if (c.cfg.plant == Plant::ScaleCopySbo) {
    d.sbo_bytes = 256;
    sdesc = d.pack();
  }
  if (!SmemDesc::fixed_bits_ok(sdesc)) c.finding("tcgen05.cp: descriptor fixed bits wrong");
  if (d.swizzle != SmemSwizzle::None) c.finding("tcgen05.cp: swizzled source not modelled");
  check_cols(c, "tcgen05.cp", taddr, 4);
  TcOp op;
  op.kind = TcOp::Cp;
  op.a = sdesc;
  op.d = detail::col_of(taddr);
  op.cols_written = {op.d, op.d + 4};
  for (uint32_t g8 = 0; g8 < 4; ++g8) {
    const uint32_t lo = d.start_addr + g8 * d.sbo_bytes;
    detail::add_range(op.smem, lo, lo + 128);
  }
  c.check_tc_issue(op, "tcgen05.cp");
  c.tc_ops.push_back(op);
  c.last_tc_was_commit = false;
  c.bump();
}

void mma_nvfp4(uint32_t d_taddr, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
               uint32_t sfa_taddr, uint32_t sfb_taddr, bool accumulate) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.tc_issue("tcgen05.mma");
  SmemDesc a = SmemDesc::unpack(a_desc), b = SmemDesc::unpack(b_desc);
  InstrDescBlockScaled id = InstrDescBlockScaled::unpack(idesc);
  switch (c.cfg.plant) {
    case Plant::OperandSbo: a.sbo_bytes = 512; a_desc = a.pack(); break;
    case Plant::OperandSwizzle: b.swizzle = SmemSwizzle::None; b_desc = b.pack(); break;
    case Plant::InstrN: id.set_n(64); idesc = id.pack(); break;
    case Plant::InstrM: id.set_m(256); idesc = id.pack(); break;
    case Plant::SwapOperands: std::swap(a_desc, b_desc); std::swap(a, b); break;
    case Plant::ScaleColumn: sfa_taddr += 4; break;
    default: break;
  }
  // PTX ISA 9.7.16.4 Table 44 (instruction descriptor, kind::mxf4nvf4) and 9.7.16.10.1
  // (shapes): E2M1 x E2M1, K-major, UE4M3 scales with scale_vec::4X; cta_group::1 means M = 128.
  bool ok = true;
  const detail::Idesc dec = detail::Idesc::read(idesc);
  if (const std::string e = dec.error(); !e.empty()) {
    c.finding(fmt::format("tcgen05.mma instruction descriptor {:#010x}: {}{}", idesc, e,
                          dec.m != 128 ? " (tcgen05.mma.cta_group::1 with M != 128)" : ""));
    ok = false;
  }
  for (const auto& [raw, d, name] : {std::tuple{a_desc, a, "A"}, std::tuple{b_desc, b, "B"}}) {
    // The swizzle the descriptor reads with must be the one TMA wrote the rows with.
    for (const auto& [r, span] : c.tma_swizzle)
      if (r.lo <= d.start_addr && d.start_addr < r.hi) {
        const bool same = (span == 128 && d.swizzle == SmemSwizzle::B128) ||
                          (span == 0 && d.swizzle == SmemSwizzle::None);
        if (!same) {
          c.finding(fmt::format("tcgen05.mma {} descriptor: swizzle mode {} reads {:#x}, which "
                                "TMA wrote with {}-byte swizzle (mode {} expected)",
                                name, static_cast<uint32_t>(d.swizzle), d.start_addr, span,
                                span == 128 ? 2 : 0));
          ok = false;
        }
        break;
      }
    if (!ok) continue;
    const std::string e = detail::desc_error(raw, d);
    if (!e.empty()) c.finding(fmt::format("tcgen05.mma {} descriptor: {}", name, e)), ok = false;
  }
  if (!ok) return;
  check_cols(c, "tcgen05.mma D", d_taddr, dec.n);
  check_cols(c, "tcgen05.mma SFA", sfa_taddr, 4);
  check_cols(c, "tcgen05.mma SFB", sfb_taddr, 4);
  TcOp op;
  op.kind = TcOp::Mma;
  op.a = a_desc;
  op.b = b_desc;
  op.idesc = idesc;
  op.d = detail::col_of(d_taddr);
  op.sfa = detail::col_of(sfa_taddr);
  op.sfb = detail::col_of(sfb_taddr);
  op.accumulate = accumulate;
  op.cols_written = {op.d, op.d + dec.n};
  op.cols_read = {{op.sfa, op.sfa + 4}, {op.sfb, op.sfb + 4}};
  if (accumulate) op.cols_read.push_back(op.cols_written);
  for (const auto& [d, rows] : {std::pair{a, dec.m}, std::pair{b, dec.n}})
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t kb = 0; kb < 32; kb += 16) {
        const uint32_t lo = detail::operand_addr(d, r, kb, c.cfg.semantics.k_step) & ~15u;
        detail::add_range(op.smem, lo, lo + 16);
      }
  // Rows land in swizzled order: keep the ranges' union small for the hazard checks.
  c.check_tc_issue(op, "tcgen05.mma");
  c.tc_ops.push_back(op);
  c.last_tc_was_commit = false;
  c.bump();
}

// tcgen05.commit (PTX ISA 9.7.16.6.3 / tcgen05.commit): one arrival on the mbarrier once every
// tcgen05 operation this thread issued before it has completed.
void mma_commit(uint32_t bar) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.tc_issue("tcgen05.commit");
  if (c.cfg.plant == Plant::SkipAccFullCommit && c.last_tc_was_commit) {
    c.last_tc_was_commit = false;
    return;
  }
  if (!c.bars.count(bar)) c.finding(fmt::format("tcgen05.commit to {:#x}: no mbarrier", bar));
  TcOp op;
  op.kind = TcOp::Commit;
  op.bar = bar;
  c.tc_ops.push_back(op);
  c.last_tc_was_commit = true;
  c.bump();
}

// tcgen05.ld.sync.aligned.32x32b.x32 (PTX ISA 9.7.16.2.3.1.1 and 9.7.16.8.1): warp-wide, one
// address for the whole warp; lane i reads 32 consecutive columns of lane (base + i); warp w
// may access only lanes 32*(w%4) to 32*(w%4)+31. Reading columns that a queued MMA writes is
// a race with the tensor core.
void tmem_load_32cols(uint32_t taddr, float (&v)[32]) {
  Cta& c = cta();
  const int w = warp();
  if (c.cfg.plant == Plant::LaneQuarter)
    taddr = (taddr & 0xFFFFu) | (static_cast<uint32_t>(32 * ((w + 1) % 4)) << 16);
  c.mu.lock();
  c.tc_issue("tcgen05.ld");
  c.warp_meet(w, "tcgen05.ld.32x32b.x32", taddr, [&] {
    const uint32_t lane = detail::lane_of(taddr), col = detail::col_of(taddr);
    if (lane != static_cast<uint32_t>(32 * (w % 4)))
      c.finding(fmt::format("tcgen05.ld by warp {} at lane {}: warp {} may access only lanes "
                            "{}-{}",
                            w, lane, w, 32 * (w % 4), 32 * (w % 4) + 31));
    if (!c.cols_allocated(col, col + 32))
      c.finding(fmt::format("tcgen05.ld of unallocated columns {}-{}", col, col + 31));
    for (const auto& q : c.tc_ops)
      if (q.kind == TcOp::Mma && q.cols_written.overlaps({col, col + 32}))
        c.finding(fmt::format("tcgen05.ld of columns {}-{} while a queued tcgen05.mma writes "
                              "them",
                              col, col + 31));
  });
  const uint32_t t = static_cast<uint32_t>(detail::current_tid() % 32);
  const bool transposed = c.cfg.semantics.load == LoadMapping::Transposed;
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t lane = detail::lane_of(taddr) + (transposed ? i : t);
    const uint32_t col = detail::col_of(taddr) + (transposed ? t : i);
    uint32_t bits = 0x7FC00000u;  // NaN for anything outside tensor memory
    if (lane < detail::kTmemLanes && col < detail::kTmemColumns) bits = c.tmem_at(lane, col);
    std::memcpy(&v[i], &bits, 4);
  }
  c.mu.unlock();
}

}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
