// The one interface every GEMM implementation meets: kernels under test, references and peers.
// An implementation knows nothing of timing, verification or reports: it gets pointers in the
// documented layouts, a stream and a workspace, and computes C = A * B^T per batch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/gemm/shape.hpp"

namespace nvfp4 {

// Where an implementation's operands live.
enum class Space { Device, Host };

// Pointers into one memory space, all in the tool's layouts (docs/format.md#layouts-per-batch-batch-outermost):
//   a           [L, M, K/2]  packed E2M1, even K index in the low nibble
//   b           [L, N, K/2]  packed E2M1 (C = A * B^T)
//   sfa, sfb    [L, M, K/16], [L, N, K/16] E4M3 bytes, linear
//   sfa_blocked, sfb_blocked  128x4-atom blocked layout, zero padded, Rp*Kp bytes per batch
//   c           [L, M, N] fp16 bits, row-major per batch
struct Operands {
  const uint8_t* a = nullptr;
  const uint8_t* b = nullptr;
  const uint8_t* sfa = nullptr;
  const uint8_t* sfb = nullptr;
  const uint8_t* sfa_blocked = nullptr;
  const uint8_t* sfb_blocked = nullptr;
  uint16_t* c = nullptr;
};

// Batch `batch` of the linear operands above (a, b, sfa, sfb, c offset by whole batches; the
// blocked scales, whose batch pitch depends on padding, are left out).
inline Operands batch_slice(const Operands& o, const Shape& s, int64_t batch) {
  Operands x;
  x.a = o.a + batch * s.m * (s.k / 2);
  x.b = o.b + batch * s.n * (s.k / 2);
  x.sfa = o.sfa + batch * s.m * (s.k / 16);
  x.sfb = o.sfb + batch * s.n * (s.k / 16);
  x.c = o.c + batch * s.m * s.n;
  return x;
}

struct DeviceInfo;  // src/device/device_info.hpp

struct Availability {
  bool ok = false;
  std::string reason;  // why not, when !ok
};

enum class Role { Kernel, Reference, Peer };

class Gemm {
 public:
  virtual ~Gemm() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual Role role() const { return Role::Kernel; }
  virtual Space space() const { return Space::Device; }
  // Whether it can run here; the reason names what is missing.
  virtual Availability availability(const DeviceInfo& dev) const = 0;
  // Empty when the shape is supported, else the rule it breaks ("K must be a multiple of 64").
  virtual std::string shape_error(const Shape&) const { return {}; }
  virtual size_t workspace_bytes(const Shape&) const { return 0; }
  // Untimed set-up before the first run (plans, handles, algorithm choice). It must not
  // precompute anything from the operand values that run() would otherwise have to do -
  // except for peers whose definition says the operands are already converted.
  virtual void prepare(const Shape&, const Operands&, cudaStream_t) {}
  // Computes C for every batch. Asynchronous on `stream` for device implementations.
  virtual void run(const Shape& shape, const Operands& ops, void* workspace,
                   cudaStream_t stream) = 0;
  // --kernel auto / --reference auto pick the available implementation with the highest rank.
  virtual int auto_rank() const { return 0; }
  // Peers whose numerics differ from NVFP4 (FP8 formats) say so in the report.
  virtual bool same_numerics() const { return true; }
  // What a kernel that chooses per shape runs for this one (path, tile, split), for the report;
  // empty when there is no choice to report.
  virtual std::string configuration(const Shape&) const { return {}; }
  // Every configuration it can run for this shape, each spelt as configuration() spells it
  // (--list-configs); empty when it has no choice.
  virtual std::vector<std::string> configurations(const Shape&) const { return {}; }
  // Pins what run() executes for this shape (--kernel-config); "" gives the choice back to the
  // kernel. Returns "" when accepted, else why not (no such configuration, or the shape does not
  // allow it), for a message that names the field and the value.
  virtual std::string set_configuration(const std::string& config, const Shape&) {
    return config.empty() ? std::string() : "this implementation has no selectable configurations";
  }
};

}  // namespace nvfp4
