// One case end to end: generate, run kernel and reference, verify, time, collect the result.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"
#include "src/device/device_info.hpp"
#include "src/measure/measure.hpp"
#include "src/measure/stream_audit.hpp"
#include "src/measure/stream_hold.hpp"
#include "src/report/result.hpp"

namespace nvfp4 {

struct CaseSpec {
  Problem problem;
  std::string kernel = "auto";
  std::string kernel_config;  // --kernel-config: what the kernel runs; empty: its own choice
  std::string reference = "auto";
  Tolerance tolerance;
  int64_t verify_sample = 0;  // 0: full check (or automatic sampling when too big for the CPU)
  MeasureOptions measure;
  bool time_reference = true;
  std::string save_tensors_dir;  // empty: don't save
  std::vector<std::string> peers;  // timed beside the kernel ("all" expanded by the caller)
  int64_t verify_exact = 0;        // also check N sampled elements of kernel AND reference on the CPU
  // The verdict (docs/cli.md): every timed call checked in full against the reference, and the
  // secret the timed calls' operands come from (unset: drawn from the OS, recorded after the run).
  bool check_every_call = false;
  bool audit_streams = false;  // --audit-streams: CUPTI's records of the kernel's timing judged
  std::optional<uint64_t> secret_seed;
  // The process ends after this case (the run command, also a sweep's isolated case): the buffers
  // the kernel was given are kept until exit, never freed, so a thread an untrusted kernel left
  // behind still writing them finds them alive (docs/cli.md, threat model: deferred host threads).
  bool last_case_in_process = false;
};

// The machine a sweep of cases runs on, set up once.
struct Context {
  DeviceInfo dev;
  std::unique_ptr<Stream> stream;       // GPU only
  std::unique_ptr<L2Flusher> flusher;   // GPU only
  std::unique_ptr<SmClockReader> clock; // GPU only: NVML or the probe kernel
  std::unique_ptr<StreamHold> hold;     // GPU only
  std::unique_ptr<StreamAudit> audit;   // GPU only, opened by the first --audit-streams case
  std::string clock_note;               // which clock source, and why
  bool gpu() const { return dev.has_gpu; }
  std::string clock_source() const { return clock ? clock->source() : "none"; }
  DeviceTimer timer() const;
  static Context create(int device_ordinal);
};

// Runs one case. Usage errors (unknown names, unsupported shapes) propagate as nvfp4::Error;
// CUDA failures too (the context may be unusable after a fault).
CaseResult run_case(const CaseSpec& spec, Context& ctx);
// The same, filling `r` as it goes: when it throws, `r` holds the problem and, once resolved,
// the kernel and reference (the caller can still report the failed case).
void run_case_into(const CaseSpec& spec, Context& ctx, CaseResult& r);

// The problem's speed of light on `dev` (src/measure/sol.hpp), and the fraction of it each timing of
// the case reaches. Nothing without a GPU.
void apply_speed_of_light(CaseResult& r, const DeviceInfo& dev);

// The files --save-tensors writes into its folder (outputs that no other output may be).
const std::vector<std::string>& saved_tensor_files();

// Cases whose full CPU check would take too long are sampled automatically.
constexpr double kAutoSampleMacs = 1.5e11;
constexpr int64_t kAutoSampleCount = 100000;

}  // namespace nvfp4
