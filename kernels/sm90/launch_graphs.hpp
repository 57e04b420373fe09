// The sm90 launchers' replay of a repeated call as one CUDA graph: a call enqueues two to four
// launches (the fused path's A prepass and main kernel; the two-phase path's decode passes,
// memset and mainloop), and the host time per call is those launches' (docs/kernels.md, "Fixed
// costs, measured"). The second time the same call comes - the same shape, configuration,
// operands and workspace - its launches are captured once into an instantiated graph, and from
// then on that call is one cudaGraphLaunch. The graph holds the same kernels with the same
// arguments; it reads whatever the buffers hold when it runs.
//
// This header is the policy alone, free of CUDA calls (tests/unit/sm90_config_test checks it):
// which calls get a graph. Bounded: at most `capacity` graphs; a call first seen after that
// (rotate mode cycles through thousands of operand copies) launches directly, so no call pays a
// capture twice.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "kernels/sm90/config.hpp"
#include "src/core/fnv.hpp"

namespace nvfp4::sm90 {

// What one call's launches depend on: the shape, the whole configuration, the operands and the
// workspace.
struct LaunchKey {
  Shape shape;
  std::array<int, 12> config{};
  std::array<const void*, 6> ptrs{};
  static LaunchKey of(const Shape& s, const Config& c, const void* a, const void* b, const void* sfa,
                      const void* sfb, const void* out, const void* workspace) {
    LaunchKey k;
    k.shape = s;
    k.config = {static_cast<int>(c.path), c.fused.m_tile, c.fused.split, c.fused.workers, c.fused.per_sm,
                c.two_phase.bm, c.two_phase.bn, c.two_phase.split, c.two_phase.group,
                c.stream.m_tile, c.stream.ctas, c.stream.warps};
    k.ptrs = {a, b, sfa, sfb, out, workspace};
    return k;
  }
  bool operator==(const LaunchKey& o) const {
    return shape.m == o.shape.m && shape.n == o.shape.n && shape.k == o.shape.k && shape.l == o.shape.l &&
           config == o.config && ptrs == o.ptrs;
  }
};

struct LaunchKeyHash {
  size_t operator()(const LaunchKey& k) const {
    Fnv64 h;
    for (int64_t v : {k.shape.m, k.shape.n, k.shape.k, k.shape.l}) h.mix(static_cast<uint64_t>(v));
    for (int v : k.config) h.mix(static_cast<uint32_t>(v));
    for (const void* p : k.ptrs) h.mix_ptr(p);
    return h.value();
  }
};

// Graph: a move-only owner of one instantiated graph (src/device/graph.hpp's GraphExec on the device).
template <class Graph>
class LaunchGraphs {
 public:
  static constexpr size_t kDefaultCapacity = 64;
  explicit LaunchGraphs(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // The graph of `key`, or nullptr.
  Graph* find(const LaunchKey& key) {
    auto it = graphs_.find(key);
    return it == graphs_.end() ? nullptr : &it->second;
  }
  // Called on a miss: true when the caller should capture `key`'s launches now (seen before,
  // and there is room); else the sighting is recorded and the caller launches directly.
  bool should_build(const LaunchKey& key) {
    if (graphs_.size() >= capacity_ || refused_.count(key)) return false;
    if (seen_.count(key)) return true;
    if (seen_.size() >= 4 * capacity_) seen_.clear();  // bounded too; forgetting costs a direct launch
    seen_.insert(key);
    return false;
  }
  Graph& add(const LaunchKey& key, Graph g) {
    seen_.erase(key);
    return graphs_.emplace(key, std::move(g)).first->second;
  }
  // The runtime refused to capture or instantiate `key`'s launches (another thread's capture
  // may forbid it): the call launches directly from now on, and no later call retries it.
  void refuse(const LaunchKey& key) {
    seen_.erase(key);
    if (refused_.size() >= 4 * capacity_) refused_.clear();  // bounded; forgetting costs one retry
    refused_.insert(key);
  }
  size_t size() const { return graphs_.size(); }
  size_t refused() const { return refused_.size(); }

 private:
  size_t capacity_;
  std::unordered_map<LaunchKey, Graph, LaunchKeyHash> graphs_;
  std::unordered_set<LaunchKey, LaunchKeyHash> seen_, refused_;
};

}  // namespace nvfp4::sm90
