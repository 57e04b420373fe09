// The host model's CTA: kernel threads as host threads, the asynchronous units as threads of
// their own, block and warp barriers, and the hang detector. See model.hpp.
#include "kernels/sm100/host_model/cta.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "kernels/sm100/host_model/cuda_host.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {
namespace detail {

namespace {
thread_local Cta* t_cta = nullptr;
thread_local int t_tid = -1;
thread_local int t_site = 0;
constexpr size_t kKeepFindings = 24;
}  // namespace

Cta* current_cta() { return t_cta; }
int current_tid() { return t_tid; }
int& current_site() { return t_site; }

Cta::Cta(const Config& c, int blk, int grd, int thr, int smem_bytes, Result& result,
         std::mutex& result_mu)
    : cfg(c),
      block(blk),
      grid(grd),
      threads(thr),
      rng(c.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(blk)),
      result_(result),
      result_mu_(result_mu) {
  // Fresh shared and tensor memory hold garbage: a read of anything never written shows up as
  // a wrong value rather than as a lucky zero.
  window_storage.resize(kWindowBytes + 1024);
  const uintptr_t p = reinterpret_cast<uintptr_t>(window_storage.data());
  window = window_storage.data() + ((1024 - p % 1024) % 1024);
  for (uint32_t i = 0; i < kWindowBytes; i += 8) {
    const uint64_t r = rng();
    std::memcpy(window + i, &r, 8);
  }
  // The dynamic window starts after the static and reserved shared memory, 16-byte aligned
  // but not necessarily 1024-byte aligned: the kernel must align its tiles itself.
  dyn_offset = cfg.smem_window_offset >= 0 ? static_cast<uint32_t>(cfg.smem_window_offset)
                                           : static_cast<uint32_t>(rng() % 64) * 16;
  if (dyn_offset + static_cast<uint64_t>(smem_bytes) > kWindowBytes)
    throw std::invalid_argument(fmt::format("host model: {} bytes of dynamic shared memory at "
                                            "offset {} exceed the {}-byte window",
                                            smem_bytes, dyn_offset, kWindowBytes));
  tmem.resize(static_cast<size_t>(kTmemLanes) * kTmemColumns);
  for (auto& w : tmem) w = static_cast<uint32_t>(rng());
  for (int t = 0; t < threads; ++t) thread_cv.push_back(std::make_unique<std::condition_variable>());
  waiting_on.assign(threads, 0);
  is_blocked.assign(threads, 0);
  blocked_at.assign(threads, {});
  warps.resize((threads + 31) / 32);
  sync_unfenced.assign(threads, {});
  tc_unfenced.assign(threads, {});
  path.assign(threads, 0);
  path_ops.assign(threads, 0);
  globals = cfg.globals;
  live = threads;
}

void Cta::finding(const std::string& what) {
  std::lock_guard<std::mutex> g(result_mu_);
  ++result_.finding_count;
  if (result_.findings.size() < kKeepFindings)
    result_.findings.push_back(fmt::format("block {}: {}", block, what));
}

void Cta::output(const std::string& line) {
  std::lock_guard<std::mutex> g(result_mu_);
  if (result_.output.size() < 1024) result_.output.push_back(line);  // one line per thread and more
}

bool Cta::trapped() {
  std::lock_guard<std::mutex> g(result_mu_);
  const bool first = !result_.trapped;
  result_.trapped = true;
  return first;
}

void Cta::bump() { unit_cv.notify_all(); }

void Cta::wake(uint64_t channel) {
  for (int t = 0; t < threads; ++t)
    if (is_blocked[t] && waiting_on[t] == channel) {
      is_blocked[t] = 0;
      --blocked;
      thread_cv[t]->notify_one();
    }
}

void Cta::wake_all() {
  for (int t = 0; t < threads; ++t)
    if (is_blocked[t]) {
      is_blocked[t] = 0;
      --blocked;
      thread_cv[t]->notify_one();
    }
  unit_cv.notify_all();
}

// Every live thread asleep and every unit idle: nothing can ever wake them. On the GPU this is
// a hang; let the kernel's watchdog see it (global_timer_ns jumps ahead).
void Cta::check_hang() {
  if (hung || aborting || live == 0 || blocked != live || !units_idle()) return;
  hung = true;
  hung_at = std::chrono::steady_clock::now();
  std::string at;
  for (int t = 0; t < threads; ++t)
    if (t % 32 == 0 || blocked_at[t] != blocked_at[t - 1])
      at += fmt::format(" thread {}: {};", t, blocked_at[t]);
  finding("hang: every thread waits and no asynchronous operation is pending (" + at + ")");
  wake_all();
}

bool Cta::wait(std::unique_lock<std::mutex>& lk, const std::function<bool()>& pred,
               const char* where, uint64_t channel, int timeout_ms) {
  const int tid = t_tid;
  if (pred()) return true;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const bool on_mbarrier = std::string(where).rfind("mbarrier", 0) == 0;
  blocked_at[tid] = where;
  bool ok = true;
  for (;;) {
    if (aborting) break;
    if (pred()) break;
    if (hung && !on_mbarrier &&
        std::chrono::steady_clock::now() - hung_at > std::chrono::milliseconds(200)) {
      // Thread barriers have no watchdog in the kernel: give the mbarrier waits' watchdogs
      // time to trap, then unwind the rest directly.
      aborting = true;
      wake_all();
      break;
    }
    if ((hung && on_mbarrier) ||
        (timeout_ms >= 0 && std::chrono::steady_clock::now() >= until)) {
      ok = false;
      break;
    }
    if (!is_blocked[tid]) {
      is_blocked[tid] = 1;
      waiting_on[tid] = channel;
      ++blocked;
    }
    check_hang();
    if (hung && on_mbarrier) continue;
    thread_cv[tid]->wait_for(lk, std::chrono::milliseconds(20));
  }
  if (is_blocked[tid]) {
    is_blocked[tid] = 0;
    --blocked;
  }
  blocked_at[tid].clear();
  if (aborting) abort_thread(lk);
  return ok;
}

void Cta::abort_thread(std::unique_lock<std::mutex>& lk) {
  lk.unlock();
  throw Abort{};
}

Mbar* Cta::bar_at(uint32_t addr, const char* op) {
  auto it = bars.find(addr);
  if (it == bars.end()) {
    finding(fmt::format("{} on shared address {:#x}, which holds no initialised mbarrier", op,
                        addr));
    return nullptr;
  }
  return &it->second;
}

// PTX ISA 9.7.13.15 (mbarrier): an arrive-on operation decrements the pending arrival count;
// expect-tx raises the tx-count first; complete-tx lowers it. The current phase completes when
// both reach zero; the barrier then flips its phase parity and reloads the pending count with
// the expected count. The tx-count must stay within +-(2^20 - 1).
void Cta::advance_phase(Mbar& b, bool async) {
  b.phase ^= 1u;
  b.pending = b.count;
  ++b.completed;
  if (async) b.async_completed = b.completed;
}

void Cta::arrive(uint32_t addr, uint32_t expect_tx, const char* op, bool async) {
  Mbar* b = bar_at(addr, op);
  if (!b) return;
  b->tx += expect_tx;
  if (b->pending == 0) {
    finding(fmt::format("{} on mbarrier {:#x}: no arrival pending", op, addr));
    return;
  }
  --b->pending;
  if (b->pending == 0 && b->tx == 0) advance_phase(*b, async);
  if (b->tx > (1 << 20) - 1 || b->tx < -((1 << 20) - 1))
    finding(fmt::format("mbarrier {:#x}: tx-count {} out of range", addr, b->tx));
  wake(addr);
}

void Cta::complete_tx(uint32_t addr, uint32_t bytes) {
  Mbar* b = bar_at(addr, "complete_tx");
  if (!b) return;
  b->tx -= bytes;
  if (b->pending == 0 && b->tx == 0) advance_phase(*b, true);
  if (b->tx < -((1 << 20) - 1))
    finding(fmt::format("mbarrier {:#x}: tx-count {} out of range", addr, b->tx));
  wake(addr);
}

int Cta::delay_us(int min_us) {
  int d = min_us;
  if (cfg.max_delay_us > 0 && static_cast<int>(rng() % 100) < cfg.delay_percent)
    d += static_cast<int>(rng() % static_cast<uint64_t>(cfg.max_delay_us + 1));
  return d;
}

void Cta::tma_unit() {
  std::unique_lock<std::mutex> lk(mu);
  for (;;) {
    unit_cv.wait_for(lk, std::chrono::milliseconds(10), [&] {
      return stop || aborting || std::any_of(tma_ops.begin(), tma_ops.end(),
                                             [](const TmaOp& o) { return !o.in_flight; });
    });
    if (stop || aborting) return;
    std::vector<size_t> ready;
    for (size_t i = 0; i < tma_ops.size(); ++i)
      if (!tma_ops[i].in_flight) ready.push_back(i);
    if (ready.empty()) continue;
    // Loads complete in any order (each has its own completion on its mbarrier).
    const size_t pick = ready[rng() % ready.size()];
    tma_ops[pick].in_flight = true;
    tma_busy = true;
    const int d = delay_us(cfg.min_tma_delay_us);
    TmaOp op = tma_ops[pick];
    lk.unlock();
    if (d > 0) std::this_thread::sleep_for(std::chrono::microseconds(d));
    lk.lock();
    if (stop || aborting) return;
    for (size_t i = 0; i < tma_ops.size(); ++i)
      if (tma_ops[i].in_flight && tma_ops[i].dst == op.dst && tma_ops[i].bar == op.bar) {
        tma_ops.erase(tma_ops.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    execute_tma(op);
    tma_busy = false;
    check_hang();
  }
}

void Cta::tc_unit() {
  std::unique_lock<std::mutex> lk(mu);
  for (;;) {
    unit_cv.wait_for(lk, std::chrono::milliseconds(10),
                [&] { return stop || aborting || !tc_ops.empty() || !arrivals.empty(); });
    if (stop || aborting) return;
    if (tc_ops.empty() && arrivals.empty()) continue;
    tc_busy = true;
    // Operations run in issue order (PTX ISA 9.7.16.6: the tcgen05 pipe); a commit's arrival
    // comes some time after the operations it tracks, in no fixed order with later work.
    const bool deliver = !arrivals.empty() && (tc_ops.empty() || rng() % 2 == 0);
    const int d = delay_us(deliver ? 0 : cfg.min_mma_delay_us);
    lk.unlock();
    if (d > 0) std::this_thread::sleep_for(std::chrono::microseconds(d));
    lk.lock();
    if (stop || aborting) return;
    if (deliver) {
      const size_t i = rng() % arrivals.size();
      const uint32_t bar = arrivals[i];
      arrivals.erase(arrivals.begin() + static_cast<std::ptrdiff_t>(i));
      arrive(bar, 0, "tcgen05.commit arrival", true);
    } else {
      const TcOp op = tc_ops.front();
      execute_tc(op);
      tc_ops.pop_front();
    }
    tc_busy = false;
    check_hang();
  }
}

void Cta::thread_main(int tid, const ThreadBody& body) {
  t_cta = this;
  t_tid = tid;
  sm100::threadIdx = {static_cast<uint32_t>(tid), 0, 0};
  sm100::blockIdx = {static_cast<uint32_t>(block), 0, 0};
  sm100::gridDim = {static_cast<uint32_t>(grid), 1, 1};
  try {
    body(smem_raw());
  } catch (const Abort&) {
  }
  std::lock_guard<std::mutex> g(mu);
  --live;
  if (live == 0 && !aborting) {
    // PTX ISA 9.7.16.7 (tcgen05.alloc): every allocated column must be released before the
    // CTA exits. Asynchronous work still queued at exit would land in the shared memory of a
    // CTA that no longer exists (the next one on the SM).
    if (allocated && !deallocated) finding("CTA exits without tcgen05.dealloc");
    // An asynchronous arrival (TMA completion, commit) lands at a time the CTA cannot know:
    // unless a wait has seen its phase, nothing proves it landed before the CTA's exit.
    for (const auto& [addr, b] : bars)
      if (b.async_completed > b.observed)
        finding(fmt::format("CTA exits before waiting for the asynchronous arrival that "
                            "completed phase {} of the mbarrier at {:#x}",
                            b.async_completed, addr));
    const size_t tma = tma_ops.size(), tc = tc_ops.size(), arr = arrivals.size();
    if (tma || tc || arr || tma_busy || tc_busy)
      finding(fmt::format("CTA exits with asynchronous work outstanding: {} TMA loads, {} "
                          "tcgen05 operations, {} commit arrivals on its mbarriers",
                          tma + (tma_busy ? 1 : 0), tc + (tc_busy ? 1 : 0), arr));
  }
  bump();
}

void Cta::run(const ThreadBody& body) {
  std::vector<std::thread> ts;
  ts.emplace_back([this] { tma_unit(); });
  ts.emplace_back([this] { tc_unit(); });
  std::vector<std::thread> kernel_threads;
  for (int t = 0; t < threads; ++t) kernel_threads.emplace_back([this, t, &body] { thread_main(t, body); });
  for (auto& t : kernel_threads) t.join();
  {
    std::lock_guard<std::mutex> g(mu);
    stop = true;
    unit_cv.notify_all();
  }
  for (auto& t : ts) t.join();
}

void Cta::warp_meet(int warp, const std::string& tag, uint32_t arg,
                    const std::function<void()>& last, bool aligned) {
  std::unique_lock<std::mutex> lk(mu, std::adopt_lock);
  WarpMeet& w = warps[warp];
  const int tid = t_tid;
  // .sync.aligned (PTX ISA 9.7.16.5 and __syncwarp): every lane of the warp executes the same
  // instruction with the same operands before any of them continues.
  if (w.arrived == 0) {
    w.tag = tag;
    w.arg = arg;
    w.first_lane = tid % 32;
    w.path = path[tid];
    w.path_ops = path_ops[tid];
    w.unconverged = false;
  } else if (w.tag != tag || w.arg != arg) {
    finding(fmt::format("warp {} diverged: lanes at {} ({:#x}) and {} ({:#x})", warp, w.tag,
                        w.arg, tag, arg));
  } else if (aligned && !w.unconverged && path[tid] != w.path) {
    // .aligned (PTX ISA 9.7.16.5, and "aligned" in the instruction descriptions): all threads
    // of the warp must execute the same instruction converged. Lanes that took different
    // paths since the warp last converged may reach it apart on the GPU: a __syncwarp first.
    w.unconverged = true;
    finding(fmt::format("warp {} issues .sync.aligned {} unconverged: lane {} comes after {} "
                        "lane-private operations since the warp last converged, lane {} after "
                        "{}, and no __syncwarp reconverged them",
                        warp, tag, w.first_lane, w.path_ops, tid % 32, path_ops[tid]));
  }
  const uint64_t gen = w.generation;
  if (++w.arrived == 32) {
    w.arrived = 0;
    ++w.generation;
    for (int t = 32 * warp; t < std::min(threads, 32 * warp + 32); ++t) {
      path[t] = 0;
      path_ops[t] = 0;
    }
    if (last) last();
    wake(kWarpChannel + static_cast<uint64_t>(warp));
  } else {
    wait(lk, [&] { return w.generation != gen; }, "warp-collective",
         kWarpChannel + static_cast<uint64_t>(warp));
  }
  lk.release();
}

void Cta::after_sync(const std::string& what) { sync_unfenced[t_tid] = what; }

// PTX ISA, tcgen05 memory consistency (9.7.16.6.4): a thread synchronisation (an mbarrier wait,
// a barrier) orders a later tcgen05 operation only through tcgen05.fence::after_thread_sync.
void Cta::tc_issue(const std::string& op) {
  const int tid = t_tid;
  if (!sync_unfenced[tid].empty()) {
    finding(fmt::format("thread {} issues {} after {} with no tcgen05.fence::after_thread_sync "
                        "between them: the wait does not order it",
                        tid, op, sync_unfenced[tid]));
    sync_unfenced[tid].clear();  // one finding per wait
  }
  tc_unfenced[tid] = op;
  lane_op(0x7C05);
}

// ... and a tcgen05 operation is ordered before a thread synchronisation (here: the arrive or
// barrier that hands tensor memory to another thread) only through
// tcgen05.fence::before_thread_sync.
void Cta::hand_on(const std::string& op) {
  const int tid = t_tid;
  if (!tc_unfenced[tid].empty()) {
    finding(fmt::format("thread {} {} after {} with no tcgen05.fence::before_thread_sync "
                        "between them: the tensor memory it hands on may still be in use",
                        tid, op, tc_unfenced[tid]));
    tc_unfenced[tid].clear();
  }
}

void Cta::lane_op(uint32_t code) {
  const int tid = t_tid;
  if (tid < 0) return;
  path[tid] = (path[tid] ^ code) * 0x100000001B3ull + 0x9E37u;
  ++path_ops[tid];
}

bool Cta::global_ok(const void* p, size_t n, const char* op) {
  if (globals.empty()) return true;
  const auto* a = static_cast<const uint8_t*>(p);
  const GlobalBuffer* nearest = nullptr;
  int64_t past = 0;
  for (const auto& g : globals) {
    const auto* b = static_cast<const uint8_t*>(g.base);
    if (a >= b && a + n <= b + g.bytes) return true;
    const int64_t d = a - (b + g.bytes);
    if (d >= 0 && (!nearest || d < past)) nearest = &g, past = d;
  }
  if (nearest)
    finding(fmt::format("out-of-bounds {} of {} bytes by thread {}: {} bytes past the end of {} "
                        "({} bytes)",
                        op, n, t_tid, past, nearest->name, nearest->bytes));
  else
    finding(fmt::format("out-of-bounds {} of {} bytes by thread {}: outside every buffer of the "
                        "launch",
                        op, n, t_tid));
  return false;
}

}  // namespace detail

}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
