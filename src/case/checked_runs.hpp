// The kernel's runs that the verdict looks at (docs/cli.md, "The verdict"): one checked run into
// a poisoned C, timing whose checked samples are poisoned and gathered (device and host), and
// the recheck on fresh operands in the same buffers.
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

// Times `g` on the device, rotating over copies of the operands as the mode asks. With
// `timed`, the outputs of the checked samples are poisoned before and gathered after at `coords`.
Measurement time_on_device(Gemm& g, const Shape& s, const DeviceTensors& dev, const Operands& ops,
                           void* ws, const MeasureOptions& mo, Context& ctx,
                           std::unique_ptr<TimedOutputs>* timed = nullptr,
                           const std::vector<Coord>& coords = {});

// Times a host kernel; its timed calls write `timed_c` (the first call's C stays for
// verification), poisoned before each checked sample and gathered after at `coords`.
Measurement time_on_host(Gemm& g, const Shape& s, const Operands& ops, void* ws,
                         const MeasureOptions& mo, std::vector<uint16_t>& timed_c,
                         std::unique_ptr<TimedOutputs>& timed, const std::vector<Coord>& coords);

// The exact CPU value of C at each of `pts`, computed in parallel.
std::vector<uint16_t> exact_at(const Shape& s, const Operands& hops, const std::vector<Coord>& pts);

// The recheck: operands of another seed generated in the kernel's own buffers, one more call
// into its poisoned C (`got`, the C of the first call), compared with the reference recomputed
// for them: a device reference run again (every element), else the exact CPU value at a sample.
// No prepare() again: the kernel was prepared for this shape and these buffers, and prepare()
// may not read the values.
Recheck recheck_on_device(const Problem& problem, Gemm& kernel, Gemm& reference, DeviceTensors& dev,
                          void* ws, HostTensors& host, std::vector<uint16_t>& got, Context& ctx,
                          const Tolerance& tol);
Recheck recheck_on_host(const Problem& problem, Gemm& kernel, HostTensors& host, void* ws,
                        std::vector<uint16_t>& got, const Tolerance& tol);

}  // namespace nvfp4
