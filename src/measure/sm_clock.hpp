// The SM clock while samples run: read per sample from NVML (loaded at run time, no link-time
// dependency) or estimated by a probe kernel (%globaltimer vs clock64). Samples taken while the
// GPU ran below a fraction of its default clock are dropped (nvbench's throttle rule).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/device/buffer.hpp"

namespace nvfp4 {

struct DeviceInfo;

// Which samples to keep. default_mhz <= 0 (unknown) or an unknown clock keeps the sample.
struct ClockPolicy {
  double default_mhz = 0;
  double min_fraction = 0.75;
  double threshold_mhz() const { return default_mhz * min_fraction; }
  bool keep(std::optional<double> mhz) const {
    return !mhz || !(default_mhz > 0) || *mhz >= threshold_mhz();
  }
};

// What the report says of the clock over one measurement.
struct ClockRecord {
  std::string source = "none";  // "nvml", "probe-kernel" or "none"
  ClockPolicy policy;
  int64_t dropped_low_clock = 0;        // samples dropped by the policy
  int64_t read = 0;                     // samples with a clock reading
  double min_mhz = 0, median_mhz = 0, max_mhz = 0;  // over the kept samples' readings
};
// Fills min/median/max from the kept samples' readings.
void summarize_clocks(ClockRecord& r, const std::vector<double>& kept_mhz);

// Two timings compared are two clocks compared: under sustained load the GPU lowers its SM clock,
// so a peer timed after the kernel can run slower clocks than the kernel did (an H200 at
// 4096x57344x8192: the kernel's samples at a median 1965 MHz, the peers' at 1560-1620). The ratio
// of a's median clock to b's; 0 when either was not read.
double clock_ratio(const ClockRecord& a, const ClockRecord& b);
// Median clocks further apart than this (3 %) are named beside the comparison (docs/cli.md).
constexpr double kClockMismatch = 0.03;
bool clocks_differ(double ratio);

class SmClockReader {
 public:
  virtual ~SmClockReader() = default;
  virtual std::string source() const = 0;
  // The SM clock now (right after a sample); nullopt when it cannot be read.
  virtual std::optional<double> read_mhz(cudaStream_t stream) = 0;
};

// NVML's functions, resolved with dlopen("libnvidia-ml.so.1"); never linked.
class Nvml {
 public:
  // nullptr (and *why_not set) when the library or the device cannot be opened.
  static std::unique_ptr<Nvml> open(const std::string& pci_bus_id, std::string* why_not);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  std::optional<double> sm_clock_mhz() const;
  std::string driver_version() const;  // e.g. "580.82.07"; empty when unknown

 private:
  Nvml() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  void* lib_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
};

// Estimates the clock from a one-thread kernel that spins ~spin_ns of %globaltimer and counts
// clock64 cycles on its own SM.
class ProbeKernelClock final : public SmClockReader {
 public:
  explicit ProbeKernelClock(uint64_t spin_ns = 20000);
  std::string source() const override { return "probe-kernel"; }
  std::optional<double> read_mhz(cudaStream_t stream) override;

 private:
  uint64_t spin_ns_;
  DeviceBuffer out_;
};

class NvmlClock final : public SmClockReader {
 public:
  explicit NvmlClock(std::unique_ptr<Nvml> nvml) : nvml_(std::move(nvml)) {}
  std::string source() const override { return "nvml"; }
  std::optional<double> read_mhz(cudaStream_t) override { return nvml_->sm_clock_mhz(); }

 private:
  std::unique_ptr<Nvml> nvml_;
};

// NVML when it opens for this device, else the probe kernel. `note` says which and why.
std::unique_ptr<SmClockReader> make_clock_reader(const DeviceInfo& dev, std::string* note);

}  // namespace nvfp4
