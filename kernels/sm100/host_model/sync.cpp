// The host model's functions that kernels/sm100/host_model/ptx_host.hpp and cuda_host.hpp
// call for the mbarrier, thread barriers, the clock, __trap and printf. See model.hpp.
#include <chrono>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "kernels/sm100/host_model/cta.hpp"

namespace nvfp4 {
namespace sm100 {
namespace host_model {

// ---- the functions ptx_host.hpp and cuda_host.hpp call -----------------------------------

using detail::Cta;

namespace {
Cta& cta() {
  Cta* c = detail::current_cta();
  if (!c) throw std::logic_error("host model: called outside host_model::launch");
  return *c;
}
}  // namespace

Plant planted() { return cta().cfg.plant; }

bool planted_skip_wait(int site) {
  detail::current_site() = site;
  static const Plant by_site[] = {Plant::None,          Plant::SkipWaitEmpty,
                                  Plant::SkipWaitAccEmpty, Plant::SkipWaitFull,
                                  Plant::SkipWaitAccFull, Plant::SkipWaitLoadTail};
  return site >= 1 && site <= 5 && planted() == by_site[site];
}

uint32_t smem_addr(const void* p) {
  Cta& c = cta();
  const auto* b = static_cast<const uint8_t*>(p);
  if (b < c.window || b >= c.window + detail::kWindowBytes)
    throw std::logic_error("host model: smem_addr of a pointer outside shared memory");
  return static_cast<uint32_t>(b - c.window);
}

void mbar_init(uint32_t bar, uint32_t count) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  // PTX ISA 9.7.13.15 (mbarrier.init): 8-byte aligned, count in [1, 2^20 - 1], phase 0.
  if (bar % 8 != 0 || !c.in_window(bar, 8))
    c.finding(fmt::format("mbarrier.init at {:#x}: not an 8-byte aligned shared address", bar));
  if (count < 1 || count > (1u << 20) - 1)
    c.finding(fmt::format("mbarrier.init at {:#x}: count {} outside [1, 2^20-1]", bar, count));
  detail::Mbar m;
  m.count = m.pending = count;
  c.bars[bar] = m;
}

void mbar_arrive(uint32_t bar, uint32_t expect_tx) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  if (expect_tx > 0 && c.cfg.plant == Plant::ExpectTxShort) expect_tx -= 16;
  if (expect_tx > 0 && c.cfg.plant == Plant::ExpectTxLong) expect_tx += 16;
  c.hand_on(expect_tx ? "arrives (expect_tx) on the mbarrier at " + fmt::format("{:#x}", bar)
                      : "arrives on the mbarrier at " + fmt::format("{:#x}", bar));
  c.lane_op(0xA1);
  c.arrive(bar, expect_tx, expect_tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive");
}

// PTX ISA 9.7.13.15 (mbarrier.try_wait.parity): true once the phase with the given parity has
// completed, i.e. the barrier's current phase parity differs from it. A fresh barrier is in
// phase 0, so waiting on parity 1 succeeds at once.
bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  Cta& c = cta();
  std::unique_lock<std::mutex> lk(c.mu);
  if (c.cfg.plant == Plant::FullParity && detail::current_site() == 3) parity ^= 1u;
  if (parity > 1) c.finding(fmt::format("try_wait.parity with parity {}", parity));
  detail::Mbar* b = c.bar_at(bar, "mbarrier.try_wait");
  if (!b) return false;
  const std::string where = fmt::format("mbarrier {:#x} wait site {}", bar, detail::current_site());
  const bool done =
      c.wait(lk, [&] { return b->phase != (parity & 1u); }, where.c_str(), bar, 5);
  if (done) {
    b->observed = b->completed;
    c.after_sync(fmt::format("the wait on the mbarrier at {:#x} (wait site {})", bar,
                             detail::current_site()));
  }
  return done;
}

uint64_t global_timer_ns() {
  Cta& c = cta();
  const uint64_t now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
  std::lock_guard<std::mutex> g(c.mu);
  // Once the model has proven a hang, every reading of the clock is 20 s later than the last,
  // so the kernel's watchdog fires on its next check.
  if (c.hung) c.hung_clock_ns += 20ull * 1000 * 1000 * 1000;
  return now + c.hung_clock_ns;
}

void block_barrier(uint32_t id, uint32_t threads) {
  Cta& c = cta();
  std::unique_lock<std::mutex> lk(c.mu);
  // PTX ISA 9.7.13.1 (bar.sync): barrier 0..15; the thread count a multiple of the warp size;
  // id 0 with no count is __syncthreads (every thread of the CTA).
  const uint32_t expected = threads == 0 ? static_cast<uint32_t>(c.threads) : threads;
  if (id > 15 || expected % 32 != 0 || expected > static_cast<uint32_t>(c.threads))
    c.finding(fmt::format("bar.sync {}, {}: bad barrier or thread count", id, threads));
  const std::string name = id == 0 ? "__syncthreads" : fmt::format("bar.sync {}", id);
  c.hand_on("syncs at " + name);
  detail::ThreadBar& b = c.thread_bars[id];
  if (b.arrived == 0) b.expected = expected;
  if (b.expected != expected)
    c.finding(fmt::format("bar.sync {}: thread counts {} and {} mixed", id, b.expected, expected));
  const uint64_t gen = b.generation;
  if (++b.arrived >= b.expected) {
    b.arrived = 0;
    ++b.generation;
    c.wake(Cta::kBarChannel + id);
    c.after_sync(name);
    return;
  }
  c.wait(lk, [&] { return b.generation != gen; }, name.c_str(), Cta::kBarChannel + id);
  c.after_sync(name);
}

void warp_sync() {
  Cta& c = cta();
  c.mu.lock();
  c.warp_meet(detail::current_tid() / 32, "__syncwarp", 0, nullptr, /*aligned=*/false);
  c.mu.unlock();
}

void tc_fence_before() {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.tc_unfenced[detail::current_tid()].clear();
}

void tc_fence_after() {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.sync_unfenced[detail::current_tid()].clear();
}

void global_store(void* p, const void* src, size_t bytes) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.lane_op(0x57);
  if (c.global_ok(p, bytes, "global store")) std::memcpy(p, src, bytes);
}

void global_load(const void* p, void* dst, size_t bytes) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  if (c.global_ok(p, bytes, "global load"))
    std::memcpy(dst, p, bytes);
  else
    std::memset(dst, 0, bytes);
}

void lane_op(uint32_t code) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.lane_op(code);
}

void trap() {
  Cta& c = cta();
  std::unique_lock<std::mutex> lk(c.mu);
  if (c.trapped()) c.finding(fmt::format("thread {} executed __trap()", detail::current_tid()));
  // After a hang every stuck thread's watchdog fires in turn, as each would on the GPU; any
  // other trap ends the run at once.
  if (!c.hung) {
    c.aborting = true;
    c.wake_all();
  }
  c.abort_thread(lk);
}

void kernel_print(const std::string& line) {
  Cta& c = cta();
  std::lock_guard<std::mutex> g(c.mu);
  c.output(line.substr(0, line.find_last_not_of('\n') + 1));
}

}  // namespace host_model
}  // namespace sm100
}  // namespace nvfp4
