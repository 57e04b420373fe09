// The host model's TMA: tensor maps, tiled loads with zero fill and swizzle, and the launch of
// a grid's CTAs. See model.hpp.
#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "kernels/sm100/host_model/cta.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {
namespace detail {

namespace {
// Tensor swizzling (PTX ISA 5.5.6, "Tensor-map swizzling modes"): for a span of 32/64/128
// bytes, the 16-byte chunk index (address bits 4..) is XORed with the row index taken from
// address bits 7..; the pattern is a function of the shared-memory address itself.
uint32_t swizzle(uint32_t addr, uint32_t span) {
  if (span == 0) return addr;
  const uint32_t mask = span / 16 - 1;
  return addr ^ (((addr >> 7) & mask) << 4);
}
}  // namespace

// PTX ISA 9.7.9.25 (cp.async.bulk.tensor, .tile) and 5.5 (tensors): the box at the given
// coordinates is copied in box order; elements outside the tensor's bounds are filled with
// zero; the mbarrier's tx-count is lowered by the full box size, filled elements included.
void Cta::execute_tma(const TmaOp& op) {
  const HostMap& m = op.map;
  const uint32_t es = m.elem_bytes;
  uint32_t linear = 0;
  for (uint32_t i2 = 0; i2 < m.box[2]; ++i2)
    for (uint32_t i1 = 0; i1 < m.box[1]; ++i1)
      for (uint32_t i0 = 0; i0 < m.box[0]; ++i0, linear += es) {
        const int64_t g0 = int64_t{op.c[0]} + i0, g1 = int64_t{op.c[1]} + i1,
                      g2 = int64_t{op.c[2]} + i2;
        uint8_t* dst = window + swizzle(op.dst + linear, m.swizzle_span);
        const bool in = g0 >= 0 && g1 >= 0 && g2 >= 0 && g0 < static_cast<int64_t>(m.dims[0]) &&
                        g1 < static_cast<int64_t>(m.dims[1]) &&
                        g2 < static_cast<int64_t>(m.dims[2]);
        if (!in) {
          std::memset(dst, 0, es);
          continue;
        }
        const uint8_t* src = m.base + g0 * es + g1 * static_cast<int64_t>(m.strides[0]) +
                             g2 * static_cast<int64_t>(m.strides[1]);
        std::memcpy(dst, src, es);
      }
  complete_tx(op.bar, op.bytes);
}

}  // namespace detail

using detail::Cta;
using detail::HostMap;

namespace {
Cta& cta() { return *detail::current_cta(); }

bool read_map(Cta& c, const CUtensorMap* map, HostMap& m, const char* op) {
  std::memcpy(static_cast<void*>(&m), map, sizeof m);
  if (m.magic != detail::kMapMagic) {
    c.finding(fmt::format("{}: not an encoded tensor map", op));
    return false;
  }
  return true;
}
}  // namespace

CUtensorMap encode_tensor_map(const TensorMapParams& p, const void* base) {
  static_assert(sizeof(HostMap) <= sizeof(CUtensorMap), "host map does not fit");
  if (const char* err = p.check()) throw std::invalid_argument(err);
  // The driver's rule (cuTensorMapEncodeTiled): the global address 16-byte aligned.
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    throw std::invalid_argument("the global address must be 16-byte aligned");
  if (p.rank > 3) throw std::invalid_argument("the host model encodes rank 1..3");
  HostMap m;
  m.magic = detail::kMapMagic;
  m.base = static_cast<const uint8_t*>(base);
  m.rank = p.rank;
  m.elem_bytes = tma_elem_bytes(p.dtype);
  m.swizzle_span = tma_swizzle_span(p.swizzle);
  for (uint32_t i = 0; i < p.rank; ++i) {
    m.box[i] = p.box[i];
    m.dims[i] = p.dims[i];
    if (p.elem_strides[i] != 1) throw std::invalid_argument("element strides must be 1");
  }
  for (uint32_t i = 0; i + 1 < p.rank; ++i) m.strides[i] = p.strides_bytes[i];
  CUtensorMap out;
  std::memset(&out, 0, sizeof out);
  std::memcpy(static_cast<void*>(&out), &m, sizeof m);
  return out;
}

void prefetch_tensormap(const CUtensorMap* map) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  HostMap m;
  read_map(c, map, m, "prefetch.tensormap");
}

void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int32_t c0, int32_t c1,
                 int32_t c2) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  detail::TmaOp op;
  if (!read_map(c, map, op.map, "cp.async.bulk.tensor")) return;
  if (op.map.rank != 3) c.finding("cp.async.bulk.tensor.3d with a map of another rank");
  if (c.cfg.plant == Plant::TmaRowCoord && c.tma_issued % 4 == 0) c1 += kBlockM;
  ++c.tma_issued;
  op.dst = dst;
  op.bar = bar;
  op.c[0] = c0;
  op.c[1] = c1;
  op.c[2] = c2;
  op.bytes = op.map.elem_bytes * op.map.box[0] * op.map.box[1] * op.map.box[2];
  c.lane_op(0x7A);
  // PTX ISA 9.7.9.25: the shared-memory destination 128-byte aligned, inside the CTA's window.
  if (dst % 128 != 0 || !c.in_window(dst, op.bytes)) {
    c.finding(fmt::format("TMA destination {:#x} (+{} bytes): not a 128-byte aligned range of "
                          "shared memory",
                          dst, op.bytes));
    return;
  }
  // Tensor-map swizzling (PTX ISA 5.5.6): the pattern repeats every 8 rows of the span, so a
  // swizzled box must start on that boundary - 1024 bytes for the 128-byte swizzle.
  const uint32_t atom = 8 * op.map.swizzle_span;
  if (atom != 0 && dst % atom != 0) {
    c.finding(fmt::format("TMA destination {:#x}: a {}-byte swizzled box must start on a "
                          "{}-byte boundary (its swizzle atom), not {} bytes past one",
                          dst, op.map.swizzle_span, atom, dst % atom));
  }
  const detail::Range r = op.range();
  for (size_t i = 0; i < c.tma_swizzle.size();)
    if (c.tma_swizzle[i].first.overlaps(r))
      c.tma_swizzle.erase(c.tma_swizzle.begin() + static_cast<std::ptrdiff_t>(i));
    else
      ++i;
  c.tma_swizzle.push_back({r, op.map.swizzle_span});
  for (const auto& o : c.tma_ops)
    if (o.range().overlaps(r))
      c.finding(fmt::format("two TMA loads in flight into shared memory {:#x}", dst));
  for (const auto& t : c.tc_ops)
    for (const auto& s : t.smem)
      if (s.overlaps(r))
        c.finding(fmt::format("TMA load into shared memory {:#x} that a queued tcgen05 "
                              "operation still reads",
                              dst));
  for (const auto& b : c.bars)
    if (r.overlaps({b.first, b.first + 8}))
      c.finding(fmt::format("TMA load over the mbarrier at {:#x}", b.first));
  if (!c.bars.count(bar)) c.finding(fmt::format("TMA completes on {:#x}, no mbarrier", bar));
  c.tma_ops.push_back(op);
  c.bump();
}

const char* plant_name(Plant p) {
  switch (p) {
    case Plant::None: return "none";
    case Plant::OperandSbo: return "operand-sbo";
    case Plant::OperandSwizzle: return "operand-swizzle";
    case Plant::InstrN: return "instr-n";
    case Plant::InstrM: return "instr-m";
    case Plant::SwapOperands: return "swap-operands";
    case Plant::ScaleColumn: return "scale-column";
    case Plant::ScaleCopySbo: return "scale-copy-sbo";
    case Plant::SkipScaleCopy: return "skip-scale-copy";
    case Plant::FullParity: return "full-parity";
    case Plant::ExpectTxShort: return "expect-tx-short";
    case Plant::ExpectTxLong: return "expect-tx-long";
    case Plant::SkipAccFullCommit: return "skip-acc-full-commit";
    case Plant::TmaRowCoord: return "tma-row-coord";
    case Plant::LaneQuarter: return "lane-quarter";
    case Plant::SkipWaitEmpty: return "skip-wait-empty";
    case Plant::SkipWaitAccEmpty: return "skip-wait-acc-empty";
    case Plant::SkipWaitFull: return "skip-wait-full";
    case Plant::SkipWaitAccFull: return "skip-wait-acc-full";
    case Plant::SkipWaitLoadTail: return "skip-wait-load-tail";
  }
  return "?";
}

std::vector<Plant> all_plants() {
  std::vector<Plant> v;
  for (int i = 1; i <= static_cast<int>(Plant::SkipWaitLoadTail); ++i)
    v.push_back(static_cast<Plant>(i));
  return v;
}

std::string Result::summary() const {
  std::string s = fmt::format("{} CTAs, {} findings{}", ctas_run, finding_count,
                              trapped ? ", trapped" : "");
  for (const auto& f : findings) s += "\n  " + f;
  for (const auto& o : output) s += "\n  printed: " + o;
  return s;
}

Result launch(const Config& cfg, int grid, int threads, int smem_bytes,
              const std::vector<int>& ctas, const ThreadBody& body) {
  Result r;
  std::mutex rmu;
  std::vector<int> order = ctas;
  std::mt19937_64 rng(cfg.seed);
  std::shuffle(order.begin(), order.end(), rng);  // which CTA of a split finishes last varies
  const size_t par = static_cast<size_t>(std::max(1, cfg.cta_parallel));
  for (size_t i = 0; i < order.size(); i += par) {
    std::vector<std::unique_ptr<Cta>> batch;
    for (size_t j = i; j < std::min(order.size(), i + par); ++j)
      batch.push_back(std::make_unique<Cta>(cfg, order[j], grid, threads, smem_bytes, r, rmu));
    std::vector<std::thread> ts;
    for (auto& c : batch) ts.emplace_back([&c, &body] { c->run(body); });
    for (auto& t : ts) t.join();
    r.ctas_run += static_cast<int>(batch.size());
  }
  return r;
}

}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
