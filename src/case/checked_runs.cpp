#include "src/case/checked_runs.hpp"

#include <fmt/format.h>

#include "src/core/parallel.hpp"
#include "src/device/cuda_check.hpp"
#include "kernels/reference/cpu_exact.hpp"

namespace nvfp4 {

namespace {

// Operand copies for rotate/graph timing: copy 0 is `base`; the others get their own A, B and
// scales (same values). Copy i writes output slot i % slots: slot 0 is base_ops.c, the others
// follow one another in extra_c (verdict.hpp, output_slots).
struct OperandCopies {
  std::vector<DeviceTensors> extra;
  std::vector<Operands> ops;
  int64_t bytes_per_copy = 0;
  int slots = 1;
  DeviceBuffer extra_c;
};

OperandCopies make_copies(const Shape& s, const DeviceTensors& base, const Operands& base_ops,
                          MeasureMode mode, size_t l2_bytes, cudaStream_t st) {
  OperandCopies c;
  c.bytes_per_copy = int64_t(base.a.bytes() + base.b.bytes() + base.sfa.bytes() + base.sfb.bytes() +
                             base.sfa_blocked.bytes() + base.sfb_blocked.bytes());
  const int n = rotation_copies(mode, c.bytes_per_copy, l2_bytes);
  const int64_t c_elems = s.l * s.m * s.n;
  c.slots = output_slots(n, c_elems * 2, l2_bytes);
  c.extra_c = DeviceBuffer(size_t(c.slots - 1) * size_t(c_elems) * 2);
  c.ops.push_back(base_ops);
  c.extra.resize(size_t(n - 1));
  for (DeviceTensors& t : c.extra) {
    t.allocate(s);
    const std::pair<DeviceBuffer*, const DeviceBuffer*> pairs[] = {
        {&t.a, &base.a}, {&t.b, &base.b}, {&t.sfa, &base.sfa}, {&t.sfb, &base.sfb},
        {&t.sfa_blocked, &base.sfa_blocked}, {&t.sfb_blocked, &base.sfb_blocked}};
    for (const auto& [dst, src] : pairs)
      NVFP4_CUDA_CHECK(cudaMemcpyAsync(dst->get(), src->get(), src->bytes(), cudaMemcpyDeviceToDevice, st));
    Operands o = t.view();
    const int slot = int(c.ops.size()) % c.slots;
    o.c = slot == 0 ? base_ops.c : c.extra_c.get<uint16_t>() + (slot - 1) * c_elems;
    c.ops.push_back(o);
  }
  NVFP4_CUDA_CHECK(cudaStreamSynchronize(st));
  return c;
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

Measurement time_on_device(Gemm& g, const Shape& s, const DeviceTensors& dev, const Operands& ops,
                           void* ws, const MeasureOptions& mo, Context& ctx,
                           std::unique_ptr<TimedOutputs>* timed, const std::vector<Coord>& coords) {
  const OperandCopies c = make_copies(s, dev, ops, mo.mode, ctx.dev.l2_bytes, ctx.stream->get());
  const int64_t c_elems = s.l * s.m * s.n;
  std::vector<uint16_t> staged;
  TimedCheck check;
  if (timed) {
    *timed = std::make_unique<TimedOutputs>(s, coords, c.slots);
    check.poison = [&](cudaStream_t q) {
      poison_device(ops.c, c_elems, q);
      if (c.slots > 1) poison_device(c.extra_c.get<uint16_t>(), (c.slots - 1) * c_elems, q);
    };
    check.collect = [&](const TimedBatch& b) {
      staged.resize(size_t(c.slots) * size_t(c_elems));
      NVFP4_CUDA_CHECK(cudaMemcpy(staged.data(), ops.c, size_t(c_elems) * 2, cudaMemcpyDeviceToHost));
      if (c.slots > 1)
        NVFP4_CUDA_CHECK(cudaMemcpy(staged.data() + c_elems, c.extra_c.get(), c.extra_c.bytes(),
                                    cudaMemcpyDeviceToHost));
      (*timed)->gather(b, [&](int slot) { return staged.data() + int64_t(slot) * c_elems; });
    };
  }
  return measure_device([&](cudaStream_t q, int copy) { g.run(s, c.ops[size_t(copy)], ws, q); },
                        int(c.ops.size()), c.bytes_per_copy, mo, ctx.timer(),
                        timed ? &check : nullptr);
}

Measurement time_on_host(Gemm& g, const Shape& s, const Operands& ops, void* ws,
                         const MeasureOptions& mo, std::vector<uint16_t>& timed_c,
                         std::unique_ptr<TimedOutputs>& timed, const std::vector<Coord>& coords) {
  Operands tops = ops;
  tops.c = timed_c.data();
  const int64_t c_elems = int64_t(timed_c.size());
  timed = std::make_unique<TimedOutputs>(s, coords, 1);
  TimedCheck check;
  check.poison = [&](cudaStream_t) { poison_host(tops.c, c_elems); };
  check.collect = [&](const TimedBatch& b) {
    timed->gather(b, [&](int) { return static_cast<const uint16_t*>(tops.c); });
  };
  return measure_host([&] { g.run(s, tops, ws, nullptr); }, mo, &check);
}

std::vector<uint16_t> exact_at(const Shape& s, const Operands& hops,
                               const std::vector<Coord>& pts) {
  std::vector<uint16_t> vals(pts.size());
  parallel_for(int64_t(pts.size()), [&](int64_t t) {
    const Coord& c = pts[size_t(t)];
    vals[size_t(t)] = exact_element_fp16(s, hops, c.batch, c.i, c.j);
  });
  return vals;
}

namespace {

// The CPU side of the recheck: the exact value at a sample (all of a small C).
Recheck against_exact(const Problem& fresh, HostTensors& host, const std::vector<uint16_t>& got,
                      const Tolerance& tol) {
  const Shape& s = fresh.shape;
  const std::vector<Coord> pts = timed_check_coords(s, {}, fresh.seed ^ 0x7153dull);
  return judge_recheck(s, fresh.seed, fmt::format("the exact CPU value at {} elements", pts.size()),
                       got, exact_at(s, host.view(), pts), pts, tol);
}

}  // namespace

Recheck recheck_on_device(const Problem& problem, Gemm& kernel, Gemm& reference, DeviceTensors& dev,
                          void* ws, HostTensors& host, std::vector<uint16_t>& got, Context& ctx,
                          const Tolerance& tol) {
  const Shape& s = problem.shape;
  const int64_t c_elems = int64_t(got.size());
  Problem fresh = problem;
  fresh.seed = recheck_seed(problem.seed);
  cudaStream_t st = ctx.stream->get();
  generate_device(fresh, dev, st);
  ctx.stream->sync();  // the operands are ready for any stream, as before the first call
  const Operands kops = dev.view();
  poison_device(kops.c, c_elems, st);
  kernel.run(s, kops, ws, st);
  ctx.stream->sync();
  NVFP4_CUDA_CHECK(cudaMemcpy(got.data(), kops.c, got.size() * 2, cudaMemcpyDeviceToHost));
  if (reference.space() == Space::Host) {
    copy_inputs_to_host(dev, host);
    return against_exact(fresh, host, got, tol);
  }
  DeviceBuffer ref_c(size_t(c_elems) * 2), rws(reference.workspace_bytes(s));
  Operands rops = dev.view();
  rops.c = ref_c.get<uint16_t>();
  std::vector<uint16_t> ref(got.size());
  run_checked_on_device(reference, s, rops, rws.get(), ctx, ref);
  return judge_recheck(s, fresh.seed,
                       fmt::format("reference {} run again on the fresh operands, every element",
                                   reference.name()),
                       got, ref, {}, tol);
}

Recheck recheck_on_host(const Problem& problem, Gemm& kernel, HostTensors& host, void* ws,
                        std::vector<uint16_t>& got, const Tolerance& tol) {
  Problem fresh = problem;
  fresh.seed = recheck_seed(problem.seed);
  generate_host(fresh, host);
  Operands kops = host.view();
  kops.c = got.data();
  poison_host(kops.c, int64_t(got.size()));
  kernel.run(problem.shape, kops, ws, nullptr);
  return against_exact(fresh, host, got, tol);
}

}  // namespace nvfp4
