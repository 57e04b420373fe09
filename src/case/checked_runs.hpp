// The kernel's runs that the verdict looks at (docs/cli.md, "The verdict"): one checked run into
// a poisoned C; timing in which every run gets fresh operands of a secret seed and a random C,
// and has its outputs gathered at secret elements (device and host); and the recheck on fresh
// operands in the same buffers.
#pragma once

#include <memory>
#include <vector>

#include "src/case/run_case.hpp"
#include "src/case/verdict.hpp"

namespace nvfp4 {

// One checked run on the device: prepare(), poisoned output, the run, then the result back to
// the host (`out` is already sized).
void run_checked_on_device(Gemm& g, const Shape& s, const Operands& ops, void* ws, Context& ctx,
                           std::vector<uint16_t>& out);

// How a timing's runs are fed and, for the kernel, checked. Every timing (kernel, reference,
// peers) gets fresh operands of `secret` in every copy and a random C before each run, so all
// are timed alike; with `reference` set, the kernel's outputs are checked as well: gathered
// after every run into `*timed`, or with `every_call` compared in full with the reference right
// after each sample (the first wrong call throws VerdictStop).
struct TimedRuns {
  Problem problem;  // the shape and distribution of the fresh operands
  uint64_t secret = 0;
  Gemm* reference = nullptr;
  Tolerance tol;
  bool every_call = false;
  StreamAudit* audit = nullptr;  // --audit-streams (the kernel's timing only)
  std::unique_ptr<TimedOutputs>* timed = nullptr;
  // Where a device timing leaves the buffers its calls read and wrote (operand copies, C slots)
  // instead of freeing them when it returns: a call may leave work behind (a host thread that
  // launches later) that must not find them freed. Null: freed with the timing.
  std::shared_ptr<void>* keep_buffers = nullptr;
};

// Times `g` on the device over copies of its operands: copy 0 is `dev` (with `ops.c` replaced by
// an output slot of the timing's own), the others are allocated here.
Measurement time_on_device(Gemm& g, DeviceTensors& dev, const Operands& ops, void* ws,
                           const MeasureOptions& mo, Context& ctx, const TimedRuns& runs);

// Times a host kernel on `ops` (allocated here, fresh values every run) writing `timed_c`; the
// caller keeps both as long as the case.
Measurement time_on_host(Gemm& g, void* ws, const MeasureOptions& mo, HostTensors& ops,
                         std::vector<uint16_t>& timed_c, const TimedRuns& runs);

// The reference's values at flat indices of C for operands of any seed, by generating them again
// (into `dev` on the device, or on the host) and running the reference: what TimedOutputs::judge
// and --check-every-call compare with.
ExpectedAt expected_on_device(const TimedRuns& runs, DeviceTensors& dev, Context& ctx);
ExpectedAt expected_on_host(const TimedRuns& runs);

// The recheck: operands of another seed generated in the kernel's own buffers, the reference
// recomputed for them first (the kernel cannot change what it reads), then one more call of the
// kernel into its poisoned C (`got`, the C of the first call): a device reference is compared in
// every element, the exact CPU value at a sample. No prepare() again: the kernel was prepared for
// this shape and these buffers, and prepare() may not read the values. `coords`: the seed of the
// sampled elements (coords_seed of the verdict's secret, so a kernel cannot know them).
Recheck recheck_on_device(const Problem& problem, Gemm& kernel, Gemm& reference, DeviceTensors& dev,
                          void* ws, HostTensors& host, std::vector<uint16_t>& got, Context& ctx,
                          uint64_t coords, const Tolerance& tol);
// The host backend's twin: `host` gets the fresh operands, `mine` (the kernel's buffers, kept by
// the caller as long as the case's) a copy of them for the kernel.
Recheck recheck_on_host(const Problem& problem, Gemm& kernel, HostTensors& host, HostTensors& mine,
                        void* ws, std::vector<uint16_t>& got, uint64_t coords, const Tolerance& tol);

}  // namespace nvfp4
