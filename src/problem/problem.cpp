#include "src/problem/problem.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "src/core/error.hpp"
#include "src/core/parallel.hpp"

namespace nvfp4 {

const char* dist_name(Dist d) { return d == Dist::Normal ? "normal" : "gpumode"; }

std::optional<Dist> parse_dist(const std::string& s) {
  if (s == "gpumode") return Dist::GpuMode;
  if (s == "normal") return Dist::Normal;
  return std::nullopt;
}

void validate_shape(const Shape& s) {
  const std::pair<const char*, int64_t> dims[] = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"l", s.l}};
  for (const auto& [name, v] : dims)
    if (v <= 0) throw usage_error(fmt::format("--{} {}: must be a positive integer", name, v));
  if (s.k % kBlockSize != 0)
    throw usage_error(fmt::format("--k {}: must be a multiple of {} (one E4M3 scale per {} "
                                  "elements)", s.k, kBlockSize, kBlockSize));
  (void)TensorBytes::of(s);
}

namespace {
int64_t mul_checked(std::initializer_list<int64_t> xs, const Shape& s, const char* what) {
  __int128 p = 1;
  for (int64_t x : xs) {
    p *= x;
    if (p > std::numeric_limits<int64_t>::max() / 4)  // leave room for sums of the sizes
      throw usage_error(fmt::format(
          "problem {}x{}x{} L={}: the {} buffer's byte count overflows 64 bits", s.m, s.n, s.k,
          s.l, what));
  }
  return static_cast<int64_t>(p);
}
}  // namespace

TensorBytes TensorBytes::of(const Shape& s) {
  TensorBytes t;
  t.a = mul_checked({s.l, s.m, s.k / 2}, s, "A");
  t.b = mul_checked({s.l, s.n, s.k / 2}, s, "B");
  t.sfa = mul_checked({s.l, s.m, s.k / kBlockSize}, s, "scale A");
  t.sfb = mul_checked({s.l, s.n, s.k / kBlockSize}, s, "scale B");
  const auto la = ScaleLayout::make(s.m, s.k, 1), lb = ScaleLayout::make(s.n, s.k, 1);
  t.sfa_blocked = mul_checked({s.l, la.rows_padded(), la.kblocks_padded()}, s, "blocked scale A");
  t.sfb_blocked = mul_checked({s.l, lb.rows_padded(), lb.kblocks_padded()}, s, "blocked scale B");
  t.c = mul_checked({s.l, s.m, s.n, 2}, s, "C");
  (void)mul_checked({t.total()}, s, "total");
  return t;
}

void HostTensors::allocate(const Shape& s) {
  const auto t = TensorBytes::of(s);
  a.assign(size_t(t.a), 0);
  b.assign(size_t(t.b), 0);
  sfa.assign(size_t(t.sfa), 0);
  sfb.assign(size_t(t.sfb), 0);
  sfa_blocked.assign(size_t(t.sfa_blocked), 0);
  sfb_blocked.assign(size_t(t.sfb_blocked), 0);
  c.assign(size_t(t.c / 2), kPoisonFp16);
}

Operands HostTensors::view() {
  return {a.data(), b.data(), sfa.data(), sfb.data(), sfa_blocked.data(), sfb_blocked.data(),
          c.data()};
}

void DeviceTensors::allocate(const Shape& s) {
  const auto t = TensorBytes::of(s);
  a = DeviceBuffer(size_t(t.a));
  b = DeviceBuffer(size_t(t.b));
  sfa = DeviceBuffer(size_t(t.sfa));
  sfb = DeviceBuffer(size_t(t.sfb));
  sfa_blocked = DeviceBuffer(size_t(t.sfa_blocked));
  sfb_blocked = DeviceBuffer(size_t(t.sfb_blocked));
  c = DeviceBuffer(size_t(t.c));
}

Operands DeviceTensors::view() const {
  return {a.get<uint8_t>(), b.get<uint8_t>(), sfa.get<uint8_t>(), sfb.get<uint8_t>(),
          sfa_blocked.get<uint8_t>(), sfb_blocked.get<uint8_t>(), c.get<uint16_t>()};
}

void linear_to_blocked(const ScaleLayout& lay, const uint8_t* linear, uint8_t* blocked) {
  std::memset(blocked, 0, size_t(lay.blocked_bytes()));
  for (int64_t batch = 0; batch < lay.batches; ++batch)
    for (int64_t r = 0; r < lay.rows; ++r)
      for (int64_t c = 0; c < lay.kblocks; ++c)
        blocked[lay.blocked_offset(r, c, batch)] = linear[lay.linear_offset(r, c, batch)];
}

namespace {
void generate_tensor_host(const Problem& p, TensorId id, int64_t rows, uint8_t* q, uint8_t* sf) {
  const Shape& s = p.shape;
  const int64_t kbs = s.k / kBlockSize;
  parallel_for(s.l * rows, [&](int64_t row) {
    for (int64_t blk = row * kbs; blk < (row + 1) * kbs; ++blk)
      generate_block(p.dist, p.seed, id, uint64_t(blk), q + blk * 8, sf + blk);
  });
}
}  // namespace

void generate_host(const Problem& p, HostTensors& t) {
  const Shape& s = p.shape;
  // Block index (batch*rows + row)*kblocks + kb equals the linear scale offset, and its 8
  // bytes sit at byte offset 8*block in the packed tensor.
  generate_tensor_host(p, TensorId::A, s.m, t.a.data(), t.sfa.data());
  generate_tensor_host(p, TensorId::B, s.n, t.b.data(), t.sfb.data());
  linear_to_blocked(ScaleLayout::make(s.m, s.k, s.l), t.sfa.data(), t.sfa_blocked.data());
  linear_to_blocked(ScaleLayout::make(s.n, s.k, s.l), t.sfb.data(), t.sfb_blocked.data());
}

void poison_host(uint16_t* c, int64_t elements) {
  std::memset(c, kPoisonByte, size_t(elements) * 2);
}

void fill_random_host(uint16_t* c, int64_t elems, int slots, uint64_t seed) {
  for (int slot = 0; slot < slots; ++slot)
    for (int64_t e = 0; e < elems; ++e)
      c[slot * elems + e] = random_finite_fp16(seed + uint64_t(slot), uint64_t(e));
}

void gather_host(const uint16_t* c, int64_t elems, int slots, int64_t per_slot, uint64_t seed,
                 uint16_t* out) {
  for (int slot = 0; slot < slots; ++slot)
    for (int64_t t = 0; t < per_slot; ++t)
      out[slot * per_slot + t] = c[slot * elems + gathered_index(seed, slot, t, elems, per_slot)];
}

}  // namespace nvfp4
