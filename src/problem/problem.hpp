// One GEMM problem and the buffers that hold its operands, on the host and on the device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/format/nvfp4.hpp"
#include "src/gemm/gemm.hpp"
#include "src/problem/generate.hpp"

namespace nvfp4 {

struct Problem {
  Shape shape;
  Dist dist = Dist::GpuMode;
  uint64_t seed = 0;
};

const char* dist_name(Dist d);
std::optional<Dist> parse_dist(const std::string& s);

// Shape rules every implementation shares; throws usage_error naming the field.
void validate_shape(const Shape& s);

// Byte counts of every tensor (scales in both layouts); throws usage_error when a count
// overflows 64 bits.
struct TensorBytes {
  int64_t a = 0, b = 0, sfa = 0, sfb = 0, sfa_blocked = 0, sfb_blocked = 0, c = 0;
  int64_t total() const { return a + b + sfa + sfb + sfa_blocked + sfb_blocked + c; }
  // What one GEMM must move at least: A, B, blocked scales read once, C written once.
  int64_t min_traffic() const { return a + b + sfa_blocked + sfb_blocked + c; }
  static TensorBytes of(const Shape& s);
};

struct HostTensors {
  std::vector<uint8_t> a, b, sfa, sfb, sfa_blocked, sfb_blocked;
  std::vector<uint16_t> c;
  void allocate(const Shape& s);
  Operands view();
};

struct DeviceTensors {
  DeviceBuffer a, b, sfa, sfb, sfa_blocked, sfb_blocked, c;
  void allocate(const Shape& s);
  Operands view() const;
};

// Fills A, B and both scale layouts (host twin of generate_device).
void generate_host(const Problem& p, HostTensors& t);
// Blocked scales from linear ones, padding zeroed (host).
void linear_to_blocked(const ScaleLayout& layout, const uint8_t* linear, uint8_t* blocked);

// GPU generation, bit-identical to generate_host.
void generate_device(const Problem& p, DeviceTensors& t, cudaStream_t stream);
// Copies the inputs (not C) to the host.
void copy_inputs_to_host(const DeviceTensors& d, HostTensors& h);
// Fills an fp16 output with kPoisonFp16.
void poison_device(uint16_t* c, int64_t elements, cudaStream_t stream);
void poison_host(uint16_t* c, int64_t elements);

// The verdict's per-call work (generate.hpp): `slots` consecutive outputs of `elems` elements
// each filled with random_finite_fp16(seed + slot, .), and `per_slot` elements of each gathered
// at gathered_index(seed, slot, .) into out[slot * per_slot + t].
void fill_random_device(uint16_t* c, int64_t elems, int slots, uint64_t seed, cudaStream_t stream);
void fill_random_host(uint16_t* c, int64_t elems, int slots, uint64_t seed);
void gather_device(const uint16_t* c, int64_t elems, int slots, int64_t per_slot, uint64_t seed,
                   uint16_t* out, cudaStream_t stream);
void gather_host(const uint16_t* c, int64_t elems, int slots, int64_t per_slot, uint64_t seed,
                 uint16_t* out);

}  // namespace nvfp4
