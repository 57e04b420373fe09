// The parts of one case (run_case.cpp) that judge its outputs (case_checks.cpp): what both
// files share. Internal to src/case.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/case/checked_runs.hpp"
#include "src/case/run_case.hpp"

namespace nvfp4 {

// Everything run_case settles before it touches a tensor: the implementations, how much of the
// output is checked, whether the inputs are needed on the host.
struct CasePlan {
  std::vector<std::string> peer_names;
  std::unique_ptr<Gemm> kernel, reference;
  int64_t c_elems = 0;
  int64_t sample = 0;  // 0: full check
  bool need_host_inputs = false;
};

// What the runs leave behind for verification, the verdict's checks and --save-tensors.
struct CaseOutputs {
  HostTensors host;
  std::vector<uint16_t> kernel_out, ref_out;
  std::vector<Coord> coords;  // the sampled coordinates (sampled verification only)
  // The kernel's operands and workspace, kept for the recheck (same buffers, fresh values).
  DeviceTensors dev;
  DeviceBuffer kws;
  std::vector<uint8_t> hws;
  TimedRuns runs;                         // how the timed runs are fed and checked
  std::unique_ptr<TimedOutputs> timed;    // what the kernel's timed calls wrote
  std::shared_ptr<void> timed_buffers;    // device backend: the kernel's timed operand copies and
                                          // C slots, alive as long as the case (TimedRuns::keep_buffers)
  std::vector<uint16_t> timed_c;          // host backend: the timed calls' output
  // host backend: the timed calls' operands, alive as long as timed_c: a call may leave a thread
  // still reading them when timing ends (the verdict's deferred cheat), and must not find them freed
  HostTensors timed_ops;
  HostTensors first_ops;                  // host backend: the first call's and the recheck's operands (copies)
  std::string stop_failure;               // the kernel's timing stopped by the verdict (VerdictStop)
};

// The CPU reference (full or at the sampled coordinates), timed once.
void run_host_reference(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r);
// Kernel against reference, sampled or full; sets the disposition. False when the reference
// left outputs unwritten: an error of the reference, not the kernel (r says so).
bool verify_against_reference(const CaseSpec& spec, const CasePlan& p, const CaseOutputs& out,
                              CaseResult& r);
// --verify-exact: kernel and reference against the exact CPU value at sampled points.
void verify_exact(const CaseSpec& spec, const CasePlan& p, CaseOutputs& out, CaseResult& r);
// The verdict's checks (verdict.hpp) for a kernel whose first call passed.
void judge_verdict(const CaseSpec& spec, const CasePlan& p, Context& ctx, CaseOutputs& out,
                   CaseResult& r);

}  // namespace nvfp4
