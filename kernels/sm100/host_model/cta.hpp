// Internal to the host model (model.hpp): the state of one executing CTA - its shared-memory
// window, mbarriers, tensor memory, the TMA and tensor-core units with their queues, the thread
// barriers - and the bookkeeping that finds hazards and hangs. One mutex guards all of it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "kernels/sm100/host_model/model.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {
namespace detail {

// The 227 KiB of shared memory one block may use on sm_100 (the kernel's static_assert).
constexpr uint32_t kWindowBytes = 232448;
constexpr int kTmemLanes = 128, kTmemColumns = 512;

struct Abort {};  // unwinds a thread once another trapped or the run cannot go on

struct Range {
  uint32_t lo = 0, hi = 0;  // [lo, hi)
  bool overlaps(const Range& o) const { return lo < o.hi && o.lo < hi; }
};

// What encode_tensor_map stores in the CUtensorMap's 128 opaque bytes.
struct HostMap {
  uint64_t magic = 0;
  const uint8_t* base = nullptr;
  uint32_t rank = 0, elem_bytes = 0, swizzle_span = 0;
  uint32_t box[3] = {1, 1, 1};
  uint64_t dims[3] = {1, 1, 1};
  uint64_t strides[2] = {0, 0};  // bytes of dims 1 and 2
};
constexpr uint64_t kMapMagic = 0x6E76667034746D61ull;

struct Mbar {
  uint32_t count = 0, pending = 0, phase = 0;
  int64_t tx = 0;
  uint64_t completed = 0;        // phases completed so far
  uint64_t async_completed = 0;  // the last phase (1-based) an asynchronous arrival completed
  uint64_t observed = 0;         // the last completed phase a successful wait has seen
};

struct TmaOp {
  uint32_t dst = 0, bar = 0, bytes = 0;
  HostMap map;
  int32_t c[3] = {0, 0, 0};
  bool in_flight = false;
  Range range() const { return {dst, dst + bytes}; }
};

struct TcOp {
  enum Kind { Cp, Mma, Commit } kind = Cp;
  uint32_t d = 0, sfa = 0, sfb = 0, idesc = 0, bar = 0;
  uint64_t a = 0, b = 0;
  bool accumulate = false;
  std::vector<Range> smem;            // shared memory it reads
  std::vector<Range> cols_read;       // tensor-memory columns it reads (all lanes)
  Range cols_written;                 // tensor-memory columns it writes
};

struct WarpMeet {
  int arrived = 0;
  uint64_t generation = 0;
  std::string tag;
  uint32_t arg = 0;
  int first_lane = 0;  // the first lane to arrive, and the path it came by
  uint64_t path = 0;
  int path_ops = 0;
  bool unconverged = false;
};

struct ThreadBar {
  uint32_t expected = 0, arrived = 0;
  uint64_t generation = 0;
};

class Cta {
 public:
  Cta(const Config& cfg, int block, int grid, int threads, int smem_bytes, Result& result,
      std::mutex& result_mu);
  void run(const ThreadBody& body);

  // Everything below runs with `mu` held (the public model functions lock it).
  std::mutex mu;
  std::condition_variable unit_cv;
  static constexpr uint64_t kBarChannel = 1ull << 40, kWarpChannel = 2ull << 40;
  const Config cfg;
  const int block, grid, threads;

  void finding(const std::string& what);
  void output(const std::string& line);  // the kernel printed
  bool trapped();  // true for the run's first trap
  void bump();                     // the units' queues changed: wake the units
  void wake(uint64_t channel);     // what threads waiting on `channel` wait for changed
  void wake_all();
  void check_hang();               // declares a hang when nothing can change any more
  // Blocks the calling kernel thread until pred() holds, sleeping on `channel` (an mbarrier's
  // address, or kBarChannel / kWarpChannel + id); with `timeout_ms` >= 0 returns false once it
  // has waited that long. Throws Abort when the run is being torn down.
  bool wait(std::unique_lock<std::mutex>& lk, const std::function<bool()>& pred,
            const char* where, uint64_t channel, int timeout_ms = -1);
  [[noreturn]] void abort_thread(std::unique_lock<std::mutex>& lk);

  // shared memory
  std::vector<uint8_t> window_storage;
  uint8_t* window = nullptr;  // 1024-byte aligned
  uint32_t dyn_offset = 0;
  uint8_t* smem_raw() { return window + dyn_offset; }
  bool in_window(uint32_t a, uint32_t n) const { return a + uint64_t{n} <= kWindowBytes; }

  std::map<uint32_t, Mbar> bars;
  Mbar* bar_at(uint32_t addr, const char* op);
  void arrive(uint32_t addr, uint32_t expect_tx, const char* op, bool async = false);
  void complete_tx(uint32_t addr, uint32_t bytes);
  void advance_phase(Mbar& b, bool async);

  // tensor memory, 128 lanes x 512 columns of 32 bits
  std::vector<uint32_t> tmem;
  uint32_t& tmem_at(uint32_t lane, uint32_t col) { return tmem[lane * kTmemColumns + col]; }
  uint32_t alloc_cols = 0;
  bool allocated = false, relinquished = false, deallocated = false;
  bool cols_allocated(uint32_t lo, uint32_t hi) const { return allocated && !deallocated && hi <= alloc_cols && lo < hi; }

  // asynchronous units
  std::vector<TmaOp> tma_ops;
  std::deque<TcOp> tc_ops;
  std::vector<uint32_t> arrivals;  // commits whose operations completed, arrival still to come
  bool tma_busy = false, tc_busy = false, stop = false;
  bool units_idle() const {
    return tma_ops.empty() && tc_ops.empty() && arrivals.empty() && !tma_busy && !tc_busy;
  }
  void execute_tma(const TmaOp& op);
  void execute_tc(const TcOp& op);
  void check_tc_issue(const TcOp& op, const char* what);
  int delay_us(int min_us);
  std::mt19937_64 rng;
  int64_t tma_issued = 0, cp_issued = 0;
  bool last_tc_was_commit = false;

  // kernel threads, their barriers and the hang detector
  int live = 0, blocked = 0;
  std::vector<std::unique_ptr<std::condition_variable>> thread_cv;
  std::vector<uint64_t> waiting_on;
  std::vector<char> is_blocked;  // asleep on waiting_on until woken
  std::vector<std::string> blocked_at;
  bool hung = false, aborting = false;
  uint64_t hung_clock_ns = 0;
  std::chrono::steady_clock::time_point hung_at;  // how far global_timer_ns has jumped since the hang
  std::map<uint32_t, ThreadBar> thread_bars;
  std::vector<WarpMeet> warps;
  // Warp-collective meeting point. `aligned`: a .sync.aligned instruction, which every lane must
  // reach converged (the same path since the warp last converged); __syncwarp reconverges.
  void warp_meet(int warp, const std::string& tag, uint32_t arg, const std::function<void()>& last,
                 bool aligned = true);

  // The PTX ISA rules the model checks per kernel thread (docs/kernels.md, "What the host
  // execution checks"). `sync_unfenced`: the wait or barrier that no
  // tcgen05.fence::after_thread_sync has followed yet; `tc_unfenced`: the tcgen05 operation
  // that no tcgen05.fence::before_thread_sync has followed yet; `path`: a hash of the
  // lane-private operations since the lane's warp last converged.
  std::vector<std::string> sync_unfenced, tc_unfenced;
  std::vector<uint64_t> path;
  std::vector<int> path_ops;
  void after_sync(const std::string& what);  // the calling thread's wait or barrier completed
  void tc_issue(const std::string& op);      // the calling thread issues a tcgen05 operation
  void hand_on(const std::string& op);       // the calling thread arrives or syncs
  void lane_op(uint32_t code);               // a lane-private operation of the calling thread
  // The swizzle span each TMA load wrote its shared-memory range with (the MMA's descriptor
  // must read it with the same swizzle).
  std::vector<std::pair<Range, uint32_t>> tma_swizzle;
  std::vector<GlobalBuffer> globals;
  // Whether [p, p + n) lies in one of `globals` (always, when none are listed); a finding
  // naming the access when not.
  bool global_ok(const void* p, size_t n, const char* op);

 private:
  void tma_unit();
  void tc_unit();
  bool all_stuck() const;
  void thread_main(int tid, const ThreadBody& body);
  Result& result_;
  std::mutex& result_mu_;
};

// The CTA and thread index of the calling host thread (set by Cta::run).
Cta* current_cta();
int current_tid();
// The kernel wait site of the calling thread's current mbarrier wait (planted_skip_wait).
int& current_site();

}  // namespace detail
}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
