// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function. The verdict draws
// every seed a kernel must not predict from its secret through it (src/case/verdict.cpp): unlike
// the generator's mixer, whose steps can each be undone, nothing a kernel sees (operands, C's
// fill) leads back to the key or to another call's seeds. Host only; the values it yields are
// passed to the device generator as plain seeds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvfp4 {

namespace siphash_detail {

constexpr uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) {  // two compression rounds
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace siphash_detail

// SipHash-2-4 of `len` bytes under the 128-bit key (k0, k1), the key's bytes read little-endian
// (the reference's key 00 01 .. 0f is k0 = 0x0706050403020100, k1 = 0x0f0e0d0c0b0a0908).
inline uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t* msg, size_t len) {
  siphash_detail::State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
                          k1 ^ 0x7465646279746573ull};
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= uint64_t(msg[i + size_t(b)]) << (8 * b);
    s.absorb(m);
  }
  uint64_t last = uint64_t(len & 0xFF) << 56;
  for (size_t b = 0; i + b < len; ++b) last |= uint64_t(msg[i + b]) << (8 * b);
  s.absorb(last);
  s.v2 ^= 0xFF;
  for (int r = 0; r < 4; ++r) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

// SipHash-2-4 of the 16 bytes of (a, b), each little-endian.
inline uint64_t siphash24(uint64_t k0, uint64_t k1, uint64_t a, uint64_t b) {
  uint8_t m[16];
  for (int i = 0; i < 8; ++i) {
    m[i] = uint8_t(a >> (8 * i));
    m[8 + i] = uint8_t(b >> (8 * i));
  }
  return siphash24(k0, k1, m, sizeof m);
}

}  // namespace nvfp4
