// The launchers' cache of encoded tensor maps (sm90 and sm100), keyed per shape and operand set:
// rotate mode cycles through many copies of the operands (docs/cli.md, --rotate), and encoding
// maps on the host for every timed launch is host time the GPU waits for (a few microseconds a
// map). Bounded: the oldest entry goes first. Header-only and free of CUDA calls, so the CPU
// tests exercise it (tests/unit/sm100_kernel_test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <deque>
#include <functional>
#include <unordered_map>

#include "src/core/fnv.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// What the maps of one launch depend on: the shape, the buffers they point at, and a launcher's
// own choice that changes the boxes (a tile size; 0 when none).
struct MapKey {
  Shape shape;
  std::array<const void*, 4> ptrs{};
  int64_t tag = 0;
  // The sm100 kernel's four maps: A, B and the blocked scales.
  static MapKey of(const Shape& s, const Operands& ops) {
    return {s, {ops.a, ops.b, ops.sfa_blocked, ops.sfb_blocked}, 0};
  }
  bool operator==(const MapKey& o) const {
    return shape.m == o.shape.m && shape.n == o.shape.n && shape.k == o.shape.k &&
           shape.l == o.shape.l && ptrs == o.ptrs && tag == o.tag;
  }
};

struct MapKeyHash {
  size_t operator()(const MapKey& k) const {
    Fnv64 h;
    for (int64_t v : {k.shape.m, k.shape.n, k.shape.k, k.shape.l, k.tag}) h.mix(static_cast<uint64_t>(v));
    for (const void* p : k.ptrs) h.mix_ptr(p);
    return h.value();
  }
};

template <class Maps>
class MapCache {
 public:
  // Enough for every rotate-mode copy of the GPU MODE shapes (3x a B200's L2 over the smallest
  // case's ~118 KB is ~3,200 copies); an entry is ~600 bytes.
  static constexpr size_t kDefaultCapacity = 4096;
  explicit MapCache(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}

  // The maps of `key`, encoded by `encode` only when not cached.
  const Maps& get(const MapKey& key, const std::function<Maps()>& encode) {
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    Maps m = encode();  // may throw: then nothing is cached
    if (entries_.size() >= capacity_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    return entries_.emplace(key, std::move(m)).first->second;
  }
  size_t size() const { return entries_.size(); }

 private:
  size_t capacity_;
  std::unordered_map<MapKey, Maps, MapKeyHash> entries_;
  std::deque<MapKey> order_;
};

}  // namespace nvfp4
