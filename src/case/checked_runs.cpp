#include "src/case/checked_runs.hpp"

#include <fmt/format.h>

#include <memory>
#include <numeric>

#include "kernels/reference/cpu_exact.hpp"
#include "src/core/host_memory.hpp"
#include "src/device/cuda_check.hpp"

namespace nvfp4 {

namespace {

// Operand copies of a device timing, one per launch of a sample: copy 0 is the caller's tensors,
// the others are allocated here; output slot i (one buffer, slots back to back) is copy i's C.
struct OperandCopies {
  std::vector<DeviceTensors> extra;
  std::vector<DeviceTensors*> tensors;
  std::vector<Operands> ops;
  DeviceBuffer c;
  int64_t bytes_per_copy = 0;
};

OperandCopies make_copies(const Shape& s, DeviceTensors& base, const Operands& base_ops, int n) {
  OperandCopies c;
  c.bytes_per_copy = int64_t(base.a.bytes() + base.b.bytes() + base.sfa.bytes() + base.sfb.bytes() +
                             base.sfa_blocked.bytes() + base.sfb_blocked.bytes());
  const int64_t c_elems = s.l * s.m * s.n;
  size_t free_bytes = 0, total_bytes = 0;
  NVFP4_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int64_t need = (n - 1) * c.bytes_per_copy + n * c_elems * 2;
  if (need > int64_t(free_bytes))
    throw runtime_error(fmt::format("out of device memory: {} launches per sample need {} operand "
                                    "copies and output slots ({} MiB), {} MiB free; ask for fewer "
                                    "with --batch",
                                    n, n, need >> 20, free_bytes >> 20));
  c.c = DeviceBuffer(size_t(n) * size_t(c_elems) * 2);
  c.extra.resize(size_t(n - 1));
  c.tensors.push_back(&base);
  for (DeviceTensors& t : c.extra) {
    t.allocate(s);
    c.tensors.push_back(&t);
  }
  for (int i = 0; i < n; ++i) {
    Operands o = i == 0 ? base_ops : c.tensors[size_t(i)]->view();
    o.c = c.c.get<uint16_t>() + int64_t(i) * c_elems;
    c.ops.push_back(o);
  }
  return c;
}

Problem with_seed(const Problem& p, uint64_t seed) {
  Problem q = p;
  q.seed = seed;
  return q;
}

// --check-every-call: every output slot of run `run` against the reference, in full.
void check_call(const TimedRuns& runs, const ExpectedAt& expected, int64_t run, int64_t sample,
                int slot, int slots, const uint16_t* got) {
  const std::vector<uint16_t> ref = expected(call_seed(runs.secret, run, slot), {});
  const std::string what = fmt::format(
      "--check-every-call: call {} ({}, launch {} of {})", run * slots + slot,
      sample < 0 ? fmt::format("warm-up run {}", run) : fmt::format("timed sample {}", sample),
      slot + 1, slots);
  std::string f = judge_output(runs.problem.shape, {}, got, ref, fill_seed(runs.secret, run) + uint64_t(slot),
                               runs.tol, what);
  if (!f.empty()) throw VerdictStop("timed_outputs", f);
}

}  // namespace

void run_checked_on_device(Gemm& g, const Shape& s, const Operands& ops, void* ws, Context& ctx,
                           std::vector<uint16_t>& out) {
  cudaStream_t st = ctx.stream->get();
  g.prepare(s, ops, st);
  poison_device(ops.c, int64_t(out.size()), st);
  g.run(s, ops, ws, st);
  ctx.stream->sync();
  NVFP4_CUDA_CHECK(cudaMemcpy(out.data(), ops.c, out.size() * 2, cudaMemcpyDeviceToHost));
}

ExpectedAt expected_on_device(const TimedRuns& runs, DeviceTensors& dev, Context& ctx) {
  struct State {
    DeviceBuffer c, ws;
    std::vector<uint16_t> full;
    HostTensors host;
  };
  auto st = std::make_shared<State>();
  const Shape s = runs.problem.shape;
  return [&runs, &dev, &ctx, st, s](uint64_t seed, const std::vector<int64_t>& idx) {
    Gemm& ref = *runs.reference;
    generate_device(with_seed(runs.problem, seed), dev, ctx.stream->get());
    ctx.stream->sync();
    if (ref.space() == Space::Host) {
      if (st->host.a.empty()) st->host.allocate(s);
      copy_inputs_to_host(dev, st->host);
      Operands h = st->host.view();
      if (!idx.empty()) return exact_at(s, h, idx);
      h.c = st->host.c.data();
      exact_gemm(s, h);
      return st->host.c;
    }
    const int64_t c_elems = s.l * s.m * s.n;
    if (!st->c.get()) {
      st->c = DeviceBuffer(size_t(c_elems) * 2);
      st->ws = DeviceBuffer(ref.workspace_bytes(s));
      st->full.resize(size_t(c_elems));
    }
    Operands o = dev.view();
    o.c = st->c.get<uint16_t>();
    run_checked_on_device(ref, s, o, st->ws.get(), ctx, st->full);
    if (idx.empty()) return st->full;
    std::vector<uint16_t> vals(idx.size());
    for (size_t t = 0; t < idx.size(); ++t) vals[t] = st->full[size_t(idx[t])];
    return vals;
  };
}

ExpectedAt expected_on_host(const TimedRuns& runs) {
  auto host = std::make_shared<HostTensors>();
  const Shape s = runs.problem.shape;
  return [&runs, host, s](uint64_t seed, const std::vector<int64_t>& idx) {
    if (host->a.empty()) host->allocate(s);
    generate_host(with_seed(runs.problem, seed), *host);
    Operands h = host->view();
    if (!idx.empty()) return exact_at(s, h, idx);
    h.c = host->c.data();
    exact_gemm(s, h);
    return host->c;
  };
}

Measurement time_on_device(Gemm& g, DeviceTensors& dev, const Operands& ops, void* ws,
                           const MeasureOptions& mo, Context& ctx, const TimedRuns& runs) {
  const Shape& s = runs.problem.shape;
  const int n = operand_copies(mo.mode, mo.batch);
  auto copies = std::make_shared<OperandCopies>(make_copies(s, dev, ops, n));
  if (runs.keep_buffers) *runs.keep_buffers = copies;
  OperandCopies& c = *copies;
  const int64_t c_elems = s.l * s.m * s.n;
  const bool checked = runs.reference != nullptr;
  const int64_t per_slot = gathered_per_slot(c_elems, n);
  DeviceBuffer gathered_dev(checked ? size_t(n * per_slot) * 2 : 0);
  PinnedBuffer<uint16_t> gathered(checked ? size_t(n * per_slot) : 0);
  PinnedBuffer<uint16_t> slot_c(checked && runs.every_call ? size_t(n) * size_t(c_elems) : 0);
  ExpectedAt expected;
  if (checked) {
    *runs.timed = std::make_unique<TimedOutputs>(s, runs.secret, n);
    if (runs.every_call) {
      expected = expected_on_device(runs, dev, ctx);
      (*runs.timed)->check_every_call();
    }
  }
  SampleHooks hooks;
  hooks.before = [&](cudaStream_t q, int64_t run) {
    for (int i = 0; i < n; ++i)
      generate_device(with_seed(runs.problem, call_seed(runs.secret, run, i)), *c.tensors[size_t(i)], q);
    fill_random_device(c.c.get<uint16_t>(), c_elems, n, fill_seed(runs.secret, run), q);
  };
  if (checked) {
    hooks.behind = [&](cudaStream_t q, int64_t run) {
      // Behind the window on the tool's stream, enqueued while it is still held: what the calls
      // wrote by the time they ended, not what work left running elsewhere writes later.
      gather_device(c.c.get<uint16_t>(), c_elems, n, per_slot, gather_seed(runs.secret, run),
                    gathered_dev.get<uint16_t>(), q);
      NVFP4_CUDA_CHECK(cudaMemcpyAsync(gathered.data(), gathered_dev.get(), gathered_dev.bytes(),
                                       cudaMemcpyDeviceToHost, q));
      if (runs.every_call)
        NVFP4_CUDA_CHECK(cudaMemcpyAsync(slot_c.data(), c.c.get(), c.c.bytes(), cudaMemcpyDeviceToHost, q));
    };
    hooks.after = [&](cudaStream_t, int64_t run, int64_t sample) {
      (*runs.timed)->offer(run, sample, gathered.data());
      if (!runs.every_call) return;
      for (int i = 0; i < n; ++i) check_call(runs, expected, run, sample, i, n, slot_c.data() + int64_t(i) * c_elems);
      (*runs.timed)->count_checked(n, n * c_elems, sample >= 0);
    };
  }
  DeviceTimer timer = ctx.timer();
  timer.audit = runs.audit;
  return measure_device([&](cudaStream_t q, int copy) { g.run(s, c.ops[size_t(copy)], ws, q); }, n,
                        c.bytes_per_copy, mo, timer, &hooks);
}

Measurement time_on_host(Gemm& g, void* ws, const MeasureOptions& mo, HostTensors& host,
                         std::vector<uint16_t>& timed_c, const TimedRuns& runs) {
  const Shape& s = runs.problem.shape;
  host.allocate(s);
  Operands tops = host.view();
  tops.c = timed_c.data();
  const int64_t c_elems = int64_t(timed_c.size());
  const bool checked = runs.reference != nullptr;
  ExpectedAt expected;
  std::vector<uint16_t> gathered, snapshot;
  if (checked) {
    *runs.timed = std::make_unique<TimedOutputs>(s, runs.secret, 1);
    gathered.resize(size_t((*runs.timed)->per_slot()));
    snapshot.resize(size_t(c_elems));
    if (runs.every_call) {
      expected = expected_on_host(runs);
      (*runs.timed)->check_every_call();
    }
  }
  SampleHooks hooks;
  // C's fill first, the operands last, the window right after them: a thread of the kernel's that
  // computes the call's C as soon as its operands are written (seen as they change) overlaps only
  // their generation, O((M + N) K), not the fill as well (O(M N), as long as a small-K GEMM: such
  // a thread once had 80-90 % of C done when the call began).
  hooks.before = [&](cudaStream_t, int64_t run) {
    fill_random_host(tops.c, c_elems, 1, fill_seed(runs.secret, run));
    generate_host(with_seed(runs.problem, call_seed(runs.secret, run, 0)), host);
  };
  if (checked) {
    // C read right as the call returns (the timer records how long that took: work a call left
    // running, on a thread or in a handler it blocks the read on, shows there). Read by the
    // operating system: a page the kernel left protected for a fault handler of its own (which
    // would compute it now, outside the window) cannot be read, and says so.
    hooks.behind_bytes = c_elems * 2;
    hooks.behind = [&](cudaStream_t, int64_t run) {
      if (!copy_without_faults(snapshot.data(), tops.c, snapshot.size() * 2))
        throw VerdictStop("timed_outputs",
                          fmt::format("run {} left its output unreadable after the call (C's pages protected "
                                      "or unmapped): work left to a fault handler would run when the "
                                      "tool reads C, outside the timed window",
                                      run));
    };
    hooks.after = [&](cudaStream_t, int64_t run, int64_t sample) {
      gather_host(snapshot.data(), c_elems, 1, int64_t(gathered.size()), gather_seed(runs.secret, run),
                  gathered.data());
      (*runs.timed)->offer(run, sample, gathered.data());
      if (!runs.every_call) return;
      check_call(runs, expected, run, sample, 0, 1, snapshot.data());
      (*runs.timed)->count_checked(1, c_elems, sample >= 0);
    };
  }
  return measure_host([&] { g.run(s, tops, ws, nullptr); }, mo, &hooks);
}

namespace {

// The CPU side of the recheck: the exact value at a sample (all of a small C).
Recheck against_exact(const Problem& fresh, HostTensors& host, const std::vector<uint16_t>& got,
                      uint64_t coords, const Tolerance& tol) {
  const Shape& s = fresh.shape;
  const int64_t c_elems = s.l * s.m * s.n;
  std::vector<Coord> pts;
  std::vector<int64_t> idx;
  if (c_elems <= kRecheckSamples) {
    idx.resize(size_t(c_elems));
    std::iota(idx.begin(), idx.end(), int64_t(0));
  } else {
    for (const Coord& c : sample_coords(s, kRecheckSamples, coords))
      idx.push_back((c.batch * s.m + c.i) * s.n + c.j);
  }
  for (int64_t e : idx) pts.push_back({e / (s.m * s.n), e / s.n % s.m, e % s.n});
  return judge_recheck(s, fresh.seed, fmt::format("the exact CPU value at {} elements", pts.size()),
                       got, exact_at(s, host.view(), idx), pts, tol);
}

}  // namespace

Recheck recheck_on_device(const Problem& problem, Gemm& kernel, Gemm& reference, DeviceTensors& dev,
                          void* ws, HostTensors& host, std::vector<uint16_t>& got, Context& ctx,
                          uint64_t coords, const Tolerance& tol) {
  const Shape& s = problem.shape;
  const int64_t c_elems = int64_t(got.size());
  const Problem fresh = with_seed(problem, recheck_seed(problem.seed));
  cudaStream_t st = ctx.stream->get();
  generate_device(fresh, dev, st);
  ctx.stream->sync();  // the operands are ready for any stream, as before the first call
  // The reference first: what the kernel then does to its inputs cannot change the expectation.
  std::vector<uint16_t> ref(got.size());
  const bool on_host = reference.space() == Space::Host;
  if (on_host) {
    copy_inputs_to_host(dev, host);
  } else {
    DeviceBuffer ref_c(size_t(c_elems) * 2), rws(reference.workspace_bytes(s));
    Operands rops = dev.view();
    rops.c = ref_c.get<uint16_t>();
    run_checked_on_device(reference, s, rops, rws.get(), ctx, ref);
  }
  const Operands kops = dev.view();
  poison_device(kops.c, c_elems, st);
  kernel.run(s, kops, ws, st);
  ctx.stream->sync();
  NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), kops.c, got.size() * 2, cudaMemcpyDeviceToHost));
  if (on_host) return against_exact(fresh, host, got, coords, tol);
  return judge_recheck(s, fresh.seed,
                       fmt::format("reference {} run again on the fresh operands, every element",
                                   reference.name()),
                       got, ref, {}, tol);
}

Recheck recheck_on_host(const Problem& problem, Gemm& kernel, HostTensors& host, HostTensors& mine,
                        void* ws, std::vector<uint16_t>& got, uint64_t coords, const Tolerance& tol) {
  const Problem fresh = with_seed(problem, recheck_seed(problem.seed));
  generate_host(fresh, host);
  // The kernel runs on a copy: what it does to its inputs cannot change the expectation. The
  // copy is the caller's (the first call's buffers, refilled), not this function's: a thread the
  // kernel leaves behind may still read it after this returns.
  mine = host;
  Operands kops = mine.view();
  kops.c = got.data();
  poison_host(kops.c, int64_t(got.size()));
  kernel.run(problem.shape, kops, ws, nullptr);
  return against_exact(fresh, host, got, coords, tol);
}

}  // namespace nvfp4
