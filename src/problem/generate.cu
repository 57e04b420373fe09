// GPU operand generation: one thread per 16-element block, the same generate_block as the host.
#include "src/device/cuda_check.hpp"
#include "src/problem/problem.hpp"

namespace nvfp4 {
namespace {

// Writes the packed bytes, the linear scales and the blocked scales of each block it generates
// (one pass: the operands are regenerated before every timed run, docs/cli.md "The verdict").
// Index is 32-bit where the block count allows: the row/column split is then a 32-bit division.
// One kernel per distribution: it runs between windows, so the default one carries none of the
// normal distribution's unrolled code (kept small, like the fill and the gather below).
template <Dist dist, class Index>
__global__ void generate_kernel(uint64_t key, ScaleLayout lay, Index blocks,
                                uint8_t* __restrict__ q, uint8_t* __restrict__ sf,
                                uint8_t* __restrict__ blocked) {
  const Index kblocks = Index(lay.kblocks), rows = Index(lay.rows);
#pragma unroll 1
  for (Index blk = blockIdx.x * Index(blockDim.x) + threadIdx.x; blk < blocks;
       blk += Index(gridDim.x) * blockDim.x) {
    uint8_t bytes[8];
    uint8_t scale;
    generate_block_keyed(dist, key, uint64_t(blk), bytes, &scale);
    uint2 packed;
    packed.x = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (uint32_t(bytes[3]) << 24);
    packed.y = bytes[4] | (bytes[5] << 8) | (bytes[6] << 16) | (uint32_t(bytes[7]) << 24);
    reinterpret_cast<uint2*>(q)[blk] = packed;  // K/2 is a multiple of 8: 8-byte aligned
    sf[blk] = scale;
    const Index row = blk / kblocks, c = blk - row * kblocks;
    const Index batch = row / rows, r = row - batch * rows;
    blocked[lay.blocked_offset(int64_t(r), int64_t(c), int64_t(batch))] = scale;
  }
}

unsigned grid_for(int64_t work, int threads) {
  const int64_t g = (work + threads - 1) / threads;
  return static_cast<unsigned>(g < 65536 * 8 ? (g > 0 ? g : 1) : 65536 * 8);
}

void generate_tensor(const Problem& p, TensorId id, int64_t rows, uint8_t* q, uint8_t* sf,
                     uint8_t* sf_blocked, cudaStream_t stream) {
  const Shape& s = p.shape;
  const int64_t blocks = s.l * rows * (s.k / kBlockSize);
  const auto lay = ScaleLayout::make(rows, s.k, s.l);
  // The blocked layout's padding is zero; the kernel writes only the entries of real blocks.
  if (lay.rows_padded() != lay.rows || lay.kblocks_padded() != lay.kblocks)
    NVFP4_CUDA_CHECK(cudaMemsetAsync(sf_blocked, 0, size_t(lay.blocked_bytes()), stream));
  const uint64_t key = random_key(p.seed, id);
  const unsigned grid = grid_for(blocks, 256);
  const bool narrow = blocks < (int64_t(1) << 31);
  if (p.dist == Dist::GpuMode) {
    if (narrow) generate_kernel<Dist::GpuMode, uint32_t><<<grid, 256, 0, stream>>>(key, lay, uint32_t(blocks), q, sf, sf_blocked);
    else generate_kernel<Dist::GpuMode, uint64_t><<<grid, 256, 0, stream>>>(key, lay, uint64_t(blocks), q, sf, sf_blocked);
  } else {
    if (narrow) generate_kernel<Dist::Normal, uint32_t><<<grid, 256, 0, stream>>>(key, lay, uint32_t(blocks), q, sf, sf_blocked);
    else generate_kernel<Dist::Normal, uint64_t><<<grid, 256, 0, stream>>>(key, lay, uint64_t(blocks), q, sf, sf_blocked);
  }
  NVFP4_CUDA_CHECK_LAUNCH();
}

}  // namespace

void generate_device(const Problem& p, DeviceTensors& t, cudaStream_t stream) {
  generate_tensor(p, TensorId::A, p.shape.m, t.a.get<uint8_t>(), t.sfa.get<uint8_t>(),
                  t.sfa_blocked.get<uint8_t>(), stream);
  generate_tensor(p, TensorId::B, p.shape.n, t.b.get<uint8_t>(), t.sfb.get<uint8_t>(),
                  t.sfb_blocked.get<uint8_t>(), stream);
}

void copy_inputs_to_host(const DeviceTensors& d, HostTensors& h) {
  auto copy = [](std::vector<uint8_t>& dst, const DeviceBuffer& src) {
    NVFP4_CUDA_CHECK(cudaMemcpy(dst.data(), src.get(), dst.size(), cudaMemcpyDeviceToHost));
  };
  copy(h.a, d.a);
  copy(h.b, d.b);
  copy(h.sfa, d.sfa);
  copy(h.sfb, d.sfb);
  copy(h.sfa_blocked, d.sfa_blocked);
  copy(h.sfb_blocked, d.sfb_blocked);
}

namespace {

// The kernels around each timed run stay small in code and free of 64-bit division: whatever
// they execute between windows evicts the timed kernel's code from the SMs' instruction caches
// (docs/cli.md, "The verdict"). A slot at a time, so no element index is divided.
__global__ void fill_random_kernel(uint16_t* __restrict__ c, int64_t elems, int slots, uint64_t seed) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  for (int slot = 0; slot < slots; ++slot, c += elems)
#pragma unroll 1
    for (int64_t e = first; e < elems; e += stride) c[e] = random_finite_fp16(seed + uint64_t(slot), uint64_t(e));
}

__global__ void gather_kernel(const uint16_t* __restrict__ c, int64_t elems, int slots,
                              int64_t per_slot, uint64_t seed, uint16_t* __restrict__ out) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  for (int slot = 0; slot < slots; ++slot, c += elems, out += per_slot)
#pragma unroll 1
    for (int64_t t = first; t < per_slot; t += stride) out[t] = c[gathered_index(seed, slot, t, elems, per_slot)];
}

}  // namespace

void fill_random_device(uint16_t* c, int64_t elems, int slots, uint64_t seed, cudaStream_t stream) {
  if (elems <= 0 || slots <= 0) return;
  fill_random_kernel<<<grid_for(elems, 256), 256, 0, stream>>>(c, elems, slots, seed);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void gather_device(const uint16_t* c, int64_t elems, int slots, int64_t per_slot, uint64_t seed,
                   uint16_t* out, cudaStream_t stream) {
  if (per_slot <= 0 || slots <= 0) return;
  gather_kernel<<<grid_for(per_slot, 256), 256, 0, stream>>>(c, elems, slots, per_slot, seed, out);
  NVFP4_CUDA_CHECK_LAUNCH();
}

void poison_device(uint16_t* c, int64_t elements, cudaStream_t stream) {
  NVFP4_CUDA_CHECK(cudaMemsetAsync(c, kPoisonByte, size_t(elements) * 2, stream));
}

}  // namespace nvfp4
