// Host models of the Blackwell hardware the sm100 kernel uses, so that the kernel's own device
// code (kernels/sm100/kernel.cuh, compiled with NVFP4_SM100_HOST_MODEL) runs on the host: every
// CUDA thread of a CTA is a host thread, the TMA engine and the tensor-core pipe are threads of
// their own with random delays, and every rule the model enforces is taken from the PTX ISA
// (sections cited where each rule is implemented). What it cannot see: docs/kernels.md.
#pragma once

#include <cuda.h>  // CUtensorMap (type only)

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/sm100/descriptors.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {

// Bugs the model can plant into the kernel's calls, to prove that it catches them. Each
// alters what the kernel hands to one instruction, as a wrong line in the kernel would.
enum class Plant {
  None,
  OperandSbo,        // A's shared-memory descriptor: stride byte offset 512 instead of 1024
  OperandSwizzle,    // B's shared-memory descriptor: no swizzle
  InstrN,            // instruction descriptor: N = 64 instead of 128
  InstrM,            // instruction descriptor: M = 256 with cta_group::1
  SwapOperands,      // A and B descriptors exchanged
  ScaleColumn,       // the MMA reads A's scales 4 columns too far
  ScaleCopySbo,      // the scale copy's descriptor: stride byte offset 256 instead of 128
  SkipScaleCopy,     // the last scale copy of B per stage is not issued
  FullParity,        // the MMA warp waits on the full barriers with the wrong parity
  ExpectTxShort,     // expect_tx announces 16 bytes fewer than the TMA loads deliver
  ExpectTxLong,      // expect_tx announces 16 bytes more
  SkipAccFullCommit, // the MMA warp never commits a finished accumulator
  TmaRowCoord,       // A's TMA box row coordinate off by one tile
  LaneQuarter,       // the epilogue reads the lane quarter of warp (w + 1) % 4
  SkipWaitEmpty,     // the producer does not wait for a free stage      (wait site 1)
  SkipWaitAccEmpty,  // the MMA warp does not wait for a drained accumulator (site 2)
  SkipWaitFull,      // the MMA warp does not wait for the loads          (site 3)
  SkipWaitAccFull,   // the epilogue does not wait for the accumulator    (site 4)
  SkipWaitLoadTail,  // the producer exits without its load tail          (site 5)
};
const char* plant_name(Plant p);
std::vector<Plant> all_plants();  // every Plant except None

// Deliberately changed hardware semantics, one switch per behaviour that no CPU check can settle
// (docs/kernels.md, "The bisect"): each alternative is a plausible other reading of the PTX ISA.
// The model's own rules and findings stay as they are; only the values change. The sm100
// bisect (kernels/sm100/bisect.hpp) must name the switch that was changed.
enum class KStep {
  Documented,         // (a) the swizzle applies to start + offsets: the 32-byte step moves along K
  SwizzleBeforeStep,  // the row swizzled from the atom's base, the start's offset added after
  StepIgnored,        // the start's offset inside the 128-byte row dropped: every MMA reads K 0-63
};
enum class ScaleCopy {
  Documented,        // (b) 32x128b.warpx4: atom row r to lane r of each of the four lane quarters
  NoMulticast,       // row r to lane r only; lanes 32-127 keep what they held
  RowsInterleaved,   // row r to lane 4 * (r % 8) + r / 8 of each quarter
};
enum class ScalePlacement {
  Documented,         // (c) row m, K block c: byte c of lane m, column base + m / 32
  ColumnByteSwapped,  // byte m / 32 of lane m, column base + c
  BytesReversed,      // byte 3 - c of lane m, column base + m / 32
};
enum class LoadMapping {
  Documented,  // (d) tcgen05.ld 32x32b.x32: thread t, register i <- lane base + t, column col + i
  Transposed,  // thread t, register i <- lane base + i, column col + t
};
struct Semantics {
  KStep k_step = KStep::Documented;
  ScaleCopy scale_copy = ScaleCopy::Documented;
  ScalePlacement scale_placement = ScalePlacement::Documented;
  LoadMapping load = LoadMapping::Documented;
  bool documented() const {
    return k_step == KStep::Documented && scale_copy == ScaleCopy::Documented &&
           scale_placement == ScalePlacement::Documented && load == LoadMapping::Documented;
  }
};

// A buffer of global memory the kernel may touch (its output, workspace, counters): with any
// listed, every store and checked load outside them is a finding instead of a stray write.
struct GlobalBuffer {
  std::string name;
  const void* base = nullptr;
  size_t bytes = 0;
};

struct Config {
  uint64_t seed = 1;           // delays, completion orders, garbage in fresh memory
  int delay_percent = 25;      // share of async operations that sleep before completing
  int max_delay_us = 200;      // upper bound of one such sleep
  int min_tma_delay_us = 0;    // every TMA load sleeps at least this long
  int min_mma_delay_us = 0;    // every tensor-core operation sleeps at least this long
  int cta_parallel = 2;        // CTAs executing at once
  Plant plant = Plant::None;
  int smem_window_offset = -1;  // dynamic shared memory start in the window (-1: random)
  std::vector<GlobalBuffer> globals;  // empty: global accesses unchecked
  Semantics semantics;                // the hardware's behaviours as the model executes them
};

struct Result {
  std::vector<std::string> findings;  // hazards and rule violations, first ones kept
  int64_t finding_count = 0;
  std::vector<std::string> output;    // what the kernel printed (its watchdog)
  bool trapped = false;               // a thread executed __trap()
  int ctas_run = 0;
  bool clean() const { return finding_count == 0 && !trapped; }
  std::string summary() const;
};

// The body of one CUDA thread: called with the CTA's dynamic shared memory.
using ThreadBody = std::function<void(uint8_t* smem_raw)>;

// Runs the listed CTAs (block indices in [0, grid)) of a grid of `grid` CTAs of `threads`
// threads each with `smem_bytes` of dynamic shared memory.
Result launch(const Config& cfg, int grid, int threads, int smem_bytes,
              const std::vector<int>& ctas, const ThreadBody& body);

// A host tensor map: what cuTensorMapEncodeTiled would encode, checked by the same rules
// (TensorMapParams::check plus the base address alignment). Throws std::invalid_argument.
CUtensorMap encode_tensor_map(const TensorMapParams& p, const void* base);

// ---- what kernels/sm100/host_model/ptx_host.hpp calls -------------------------------------

bool planted_skip_wait(int site);
Plant planted();
uint32_t smem_addr(const void* p);
void mbar_init(uint32_t bar, uint32_t count);
void mbar_arrive(uint32_t bar, uint32_t expect_tx_bytes);
bool mbar_try_wait(uint32_t bar, uint32_t parity);
uint64_t global_timer_ns();
void prefetch_tensormap(const CUtensorMap* map);
void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int32_t c0, int32_t c1,
                 int32_t c2);
void tmem_alloc(uint32_t dst, uint32_t cols);
void tmem_relinquish();
void tmem_dealloc(uint32_t taddr, uint32_t cols);
void tmem_copy_scale_atom(uint32_t taddr, uint64_t sdesc);
void mma_nvfp4(uint32_t d_taddr, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
               uint32_t sfa_taddr, uint32_t sfb_taddr, bool accumulate);
void mma_commit(uint32_t bar);
void tmem_load_32cols(uint32_t taddr, float (&v)[32]);
void block_barrier(uint32_t id, uint32_t threads);
void tc_fence_before();
void tc_fence_after();
void global_store(void* p, const void* src, size_t bytes);
void global_load(const void* p, void* dst, size_t bytes);
void lane_op(uint32_t code);  // a lane-private operation (the convergence check's path)
void warp_sync();
[[noreturn]] void trap();
void kernel_print(const std::string& line);

// The CUDA built-ins threadIdx, blockIdx and gridDim of the calling thread (cuda_host.hpp).
struct Index {
  uint32_t x = 0, y = 0, z = 0;
};

}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
