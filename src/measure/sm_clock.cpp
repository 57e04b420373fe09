#include "src/measure/sm_clock.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "src/device/device_info.hpp"
#include "src/measure/stats.hpp"

namespace nvfp4 {

void summarize_clocks(ClockRecord& r, const std::vector<double>& kept_mhz) {
  r.read = int64_t(kept_mhz.size());
  if (kept_mhz.empty()) return;
  const Stats s = summarize(kept_mhz);
  r.min_mhz = s.min;
  r.median_mhz = s.median;
  r.max_mhz = s.max;
}

double clock_ratio(const ClockRecord& a, const ClockRecord& b) {
  if (a.read == 0 || b.read == 0 || a.median_mhz <= 0 || b.median_mhz <= 0) return 0;
  return a.median_mhz / b.median_mhz;
}

bool clocks_differ(double ratio) { return ratio > 0 && std::abs(ratio - 1.0) > kClockMismatch; }

// The few NVML entry points used, declared from the documented C API (no nvml.h needed):
// every function returns nvmlReturn_t (0 = NVML_SUCCESS); nvmlDevice_t is an opaque pointer.
struct Nvml::Api {
  using Ret = int;
  Ret (*init)() = nullptr;                                          // nvmlInit_v2
  Ret (*shutdown)() = nullptr;                                      // nvmlShutdown
  Ret (*by_pci)(const char*, void**) = nullptr;                     // nvmlDeviceGetHandleByPciBusId_v2
  Ret (*clock_info)(void*, int, unsigned*) = nullptr;               // nvmlDeviceGetClockInfo
  Ret (*driver_version)(char*, unsigned) = nullptr;                 // nvmlSystemGetDriverVersion
  const char* (*error_string)(Ret) = nullptr;                       // nvmlErrorString
};
namespace {
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
}

std::unique_ptr<Nvml> Nvml::open(const std::string& pci_bus_id, std::string* why_not) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (why_not) *why_not = "libnvidia-ml.so.1 not loadable";
    return nullptr;
  }
  std::unique_ptr<Nvml> n(new Nvml());
  n->lib_ = lib;
  n->api_ = std::make_unique<Api>();
  Api& a = *n->api_;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr;
  };
  if (!sym(a.init, "nvmlInit_v2") || !sym(a.shutdown, "nvmlShutdown") ||
      !sym(a.by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !sym(a.clock_info, "nvmlDeviceGetClockInfo") ||
      !sym(a.driver_version, "nvmlSystemGetDriverVersion") || !sym(a.error_string, "nvmlErrorString")) {
    if (why_not) *why_not = "libnvidia-ml.so.1 lacks an expected function";
    a.init = nullptr;  // nothing to shut down
    return nullptr;
  }
  if (const int rc = a.init(); rc != 0) {
    if (why_not) *why_not = fmt::format("nvmlInit: {}", a.error_string(rc));
    a.init = nullptr;
    return nullptr;
  }
  if (const int rc = a.by_pci(pci_bus_id.c_str(), &n->device_); rc != 0) {
    if (why_not) *why_not = fmt::format("NVML device {}: {}", pci_bus_id, a.error_string(rc));
    return nullptr;
  }
  return n;
}

Nvml::~Nvml() {
  if (api_ && api_->init) api_->shutdown();
  if (lib_) dlclose(lib_);
}

std::optional<double> Nvml::sm_clock_mhz() const {
  unsigned mhz = 0;
  if (api_->clock_info(device_, kNvmlClockSm, &mhz) != 0) return std::nullopt;
  return double(mhz);
}

std::string Nvml::driver_version() const {
  char buf[96] = {0};
  if (api_->driver_version(buf, sizeof buf) != 0) return {};
  return buf;
}

std::unique_ptr<SmClockReader> make_clock_reader(const DeviceInfo& dev, std::string* note) {
  std::string why;
  if (auto nvml = Nvml::open(dev.pci_bus_id, &why)) {
    if (nvml->sm_clock_mhz()) {
      if (note) *note = "SM clock read from NVML after each sample";
      return std::make_unique<NvmlClock>(std::move(nvml));
    }
    why = "NVML cannot read the SM clock";
  }
  if (note) *note = fmt::format("SM clock estimated by a probe kernel after each sample ({})", why);
  return std::make_unique<ProbeKernelClock>();
}

}  // namespace nvfp4
