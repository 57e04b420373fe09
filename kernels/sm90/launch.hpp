// The sm90 kernel's launchers (host side, CUDA): launch() and the per-device state it keeps
// (launch.cpp), the fused path (fused.cu), the two-phase path and its fp16 mainloop
// (two_phase.cu, mainloop.cu), the streaming path (stream.cu). The Gemm objects (sm90.cu) and the GPU tests call them; the
// heuristics that pick a Config are in heuristics.hpp.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/sm90/config.hpp"
#include "kernels/sm90/launch_graphs.hpp"
#include "src/device/graph.hpp"
#include "src/device/map_cache.hpp"
#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4::sm90 {

// Runs here only on compute capability 9.0 (sm_90a code); the reason names what is missing.
Availability availability(const DeviceInfo& dev);

// The SM count the heuristics assume without a GPU to ask (an H200 or H100 SXM).
constexpr int kDefaultSmCount = 132;

// A stream of the launcher's own, created on first use: calls are captured into graphs there,
// never on the caller's stream (which may be the legacy default stream, or held).
class OwnStream {
 public:
  OwnStream() = default;
  OwnStream(OwnStream&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  OwnStream& operator=(OwnStream&&) = delete;
  OwnStream(const OwnStream&) = delete;
  ~OwnStream();
  cudaStream_t get();  // the caller has made the owning device current

 private:
  cudaStream_t s_ = nullptr;
};

// What launches need of one device: its SM count, which kernels have had their dynamic
// shared-memory limit raised there (a per-device function attribute), the tensor maps and the
// calls replayed as graphs. Owned by the kernel object, one per device it launches on, so one
// process can drive several GPUs.
class DeviceState {
 public:
  explicit DeviceState(int device);  // -1: no usable device (kDefaultSmCount assumed)
  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  // Raises `kernel`'s dynamic shared-memory limit to `bytes` on this device, once. The caller
  // has made this device current.
  void ensure_smem_limit(const void* kernel, size_t bytes);
  // Encoded tensor maps, once per shape, buffer set and tile (src/device/map_cache.hpp): the
  // fused path's C, raw-B and B-scale maps, the fp16 mainloop's A, B and C maps.
  MapCache<std::array<CUtensorMap, 3>> fused_maps;
  MapCache<std::array<CUtensorMap, 3>> mainloop_maps;
  // Calls seen twice, as instantiated graphs (launch(); launch_graphs.hpp; src/device/graph.hpp),
  // and the stream they are captured on.
  LaunchGraphs<GraphExec> graphs;
  OwnStream capture_stream;
  // Where `words` is set (device memory of StampLayout::words(ctas, units_per_cta) words), the
  // fused kernel records its time line there (stamps.hpp), and `grid` says how many CTAs the
  // last launch had. For diagnosis only (bench/sm90_stamps.cu); set it before a shape's first
  // call: a call replayed as a graph keeps what it was captured with.
  struct Stamps {
    uint64_t* words = nullptr;
    int ctas = 0, units_per_cta = 0, grid = 0;
  } fused_stamps;
  // The same for the streaming path (StreamStampLayout::words(ctas) words; stream_kernel.cuh).
  struct StreamStamps {
    uint64_t* words = nullptr;
    int ctas = 0, grid = 0;
  } stream_stamps;

 private:
  int device_ = -1;
  int sm_count_ = kDefaultSmCount;
  std::vector<const void*> raised_;
};

// The DeviceState of each device an object has launched on (or asked the SM count of).
class PerDevice {
 public:
  DeviceState& current();  // of the current device

 private:
  std::map<int, DeviceState> states_;
};

// Asynchronous on `stream` (whose device is current); `workspace` holds workspace_bytes(s, c)
// bytes, 256-byte aligned. Normalises c; checks the operands' alignment. A call made before with
// the same shape, configuration, operands and workspace is replayed as one graph (dev.graphs),
// unless `stream` is being captured (then the launches go into the caller's capture).
void launch(const Shape& s, const Operands& ops, const Config& c, void* workspace,
            cudaStream_t stream, DeviceState& dev);
void launch_fused(const Shape& s, const Operands& ops, const FusedConfig& c, void* workspace,
                  cudaStream_t stream, DeviceState& dev);
void launch_two_phase(const Shape& s, const Operands& ops, const TwoPhaseConfig& c, void* workspace,
                      cudaStream_t stream, DeviceState& dev);
void launch_stream(const Shape& s, const Operands& ops, const StreamConfig& c, void* workspace,
                   cudaStream_t stream, DeviceState& dev);
// The fp16 mainloop on fp16 operands (A [L,M,K], B [L,N,K], C [L,M,N]); `workspace` holds
// mainloop_workspace_bytes(s, c) (none without split-K).
void launch_mainloop(const Shape& s, const uint16_t* a16, const uint16_t* b16, uint16_t* c,
                     const TwoPhaseConfig& cfg, void* workspace, cudaStream_t stream, DeviceState& dev);

// [L, rows, cols] fp16 (cols contiguous) read or written in [1, box_rows, 64] boxes, 128-byte
// swizzle, out-of-bounds reads zero and writes clipped: the operand and C maps of both paths.
CUtensorMap fp16_tensor_map(const void* base, int64_t rows, int64_t cols, int64_t l, int box_rows,
                            CUtensorMapL2promotion l2, const std::string& what);

}  // namespace nvfp4::sm90
