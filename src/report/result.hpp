// The result model: what one run measured and decided. Writers only format it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/device/device_info.hpp"
#include "src/measure/floor.hpp"
#include "src/measure/sol.hpp"
#include "src/gemm/gemm.hpp"
#include "src/measure/measure.hpp"
#include "src/problem/problem.hpp"
#include "src/verify/verify.hpp"

namespace nvfp4 {

// 2: measurement settings and per-timing sampling/clock records, stats noise estimates,
//    sol_*, provenance (seed, tolerance, build, NVML); "flush_l2" became "mode".
//    Additions within 2 (optional keys): cases[].verdict, timings' host_us_per_call and
//    stream_held.
constexpr int kReportSchemaVersion = 2;

enum class Disposition { Passed, Incorrect, NotSupported, Error };
const char* disposition_name(Disposition d);

struct TimingResult {
  std::string name;
  std::string role;  // "kernel", "reference", "peer"
  bool ran = false;
  std::string reason;  // why not run
  bool same_numerics = true;
  Measurement measurement;
  double tflops = 0;  // 2*M*N*K*L / median
  double gbps = 0;    // minimum traffic (padded scales included) / median
  double kernel_speedup = 0;  // peers: peer median / kernel median (> 1: the kernel is faster)
  double clock_ratio = 0;     // peers: peer's median SM clock / the kernel's (0: not both read)
  // Fraction of the speed of light: sol_us / median, filled by set_speed_of_light when the
  // device's speed of light is known (src/measure/sol.hpp); absent otherwise.
  std::optional<double> sol_us, sol_fraction;
  std::string sol_basis;  // what the SOL figure rests on, e.g. "NVIDIA H200 SXM, memory bound"
  void set_speed_of_light(double sol_us, const std::string& basis);
};

// What the verdict checked beyond the first call (docs/cli.md, "The verdict"; docs/report.md): what the timed
// calls wrote, one more call on fresh operands in the same buffers, and the physical floor.
// What the timed calls wrote (docs/cli.md, "The verdict"): fresh operands of a secret seed and a
// random C before every run, the outputs gathered after it, a secret subset verified.
struct TimedOutputsCheck {
  bool done = false;
  bool every_call = false;  // --check-every-call: every call checked in full right after its sample
  uint64_t secret_seed = 0; // the secret, told once the run is over (--secret-seed reproduces it)
  int64_t runs = 0;      // runs gathered: warm-ups and samples
  int64_t samples = 0;   // samples verified
  int64_t outputs = 0;   // outputs compared (samples x slots)
  int64_t elements = 0;  // elements compared, all outputs together
  int slots = 1;         // outputs per sample: one per launch, each with its own operand copy
  int64_t coords = 0;    // elements compared per output
  std::string failure;   // empty: every verified output was right; else which call and how
};

// What the stream holds saw of work outside the timed stream (src/measure/stream_hold.hpp).
struct IsolationCheck {
  bool done = false;     // false: no hold (host backend, or batches too long to hold)
  int holds = 0;
  int holds_timed_out = 0;
  double max_start_skew_us = 0, max_gap_us = 0;
  // --audit-streams: CUPTI's records of the timing (src/measure/stream_audit.hpp)
  bool audited = false;
  int64_t audit_records = 0, audit_windows = 0, audit_outside = 0;
  std::string failure;   // empty: nothing seen
};

struct Recheck {
  bool done = false;
  uint64_t seed = 0;     // the fresh operands' seed
  std::string against;   // what the output was compared with
  VerifyResult result;
};

struct VerdictChecks {
  TimedOutputsCheck timed;
  IsolationCheck isolation;
  Recheck recheck;
  Floor floor;
  std::string floor_failure;  // empty: at or above the floor (or none known)
};

struct CaseResult {
  Problem problem;
  std::string kernel, kernel_description;  // the kernel that ran (resolved)
  std::string kernel_asked;  // what the run asked for ("auto" or a name); empty: the same
  std::string kernel_configuration;  // Gemm::configuration() for this problem; may be empty
  std::string reference, reference_description;
  Disposition disposition = Disposition::Error;
  std::string message;  // one line: why not passed
  Tolerance tolerance;
  std::optional<VerifyResult> verification;
  // --verify-exact: kernel and reference each checked against the exact CPU reference.
  std::optional<VerifyResult> exact_kernel, exact_reference;
  std::optional<TimingResult> kernel_timing, reference_timing;
  std::vector<TimingResult> peers;
  TensorBytes bytes;
  std::vector<std::string> notes;
  std::optional<SolResult> speed_of_light;  // of the problem on this device
  std::optional<VerdictChecks> verdict;     // set once the kernel was timed
};

struct RunInfo {
  std::vector<std::string> argv;
  std::string version = NVFP4_VERSION;
  std::string git_revision = NVFP4_GIT_REV;
  std::string hostname;
  std::string utc_time;  // ISO 8601
  std::string backend;   // "cuda" or "host"
  DeviceInfo device;
  MeasureOptions measure;
  // The run's inputs as given (each case repeats its own seed and tolerance).
  uint64_t seed = 0;
  Tolerance tolerance;
  std::string clock_source;     // how SM clocks were read ("nvml", "probe-kernel", "none")
  std::string clock_note;       // why that source
  std::string nvml_driver_version;  // e.g. "580.82.07" when NVML is loadable
  int cuda_compiled_version = CUDART_VERSION;  // the toolkit the binary was built with
  std::string compiler;         // e.g. "g++ 12.2.0"
  std::string build_type;       // CMAKE_BUILD_TYPE
  static RunInfo collect(int argc, char** argv, const DeviceInfo& dev, const MeasureOptions& m);
};

// For the text summary: one line of what the verdict checked and how it went ("" without a
// verdict), and a device timing's host time per call (", host 3.2 us/call"; "" for a host one).
std::string verdict_line(const CaseResult& r);
std::string host_call_text(const Measurement& m);

TimingResult make_timing(const std::string& name, const std::string& role, Measurement m,
                         const Shape& s, const TensorBytes& bytes, bool same_numerics = true);

}  // namespace nvfp4
