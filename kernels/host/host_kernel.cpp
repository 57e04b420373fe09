// `host`: the kernel under test on a machine without a GPU. Written independently of the exact
// reference on purpose (dequantize to float, FP32 accumulation, like the naive GPU kernel), so
// that verifying it against the reference is a real check that can fail. The arithmetic is
// kernels/host/host_sgemm.hpp; its configurations are the instruction sets this CPU runs
// (--kernel-config avx512|avx2|generic), all bit-identical, the fastest by default.
#include <algorithm>
#include <fmt/format.h>

#include "kernels/host/host_sgemm.hpp"
#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {
namespace {

class HostGemm final : public Gemm {
 public:
  HostGemm() : here_(host::isas_here()), isa_(here_.front()) {}
  std::string name() const override { return "host"; }
  std::string description() const override {
    return fmt::format("CPU, dequantize to float then a blocked FP32 GEMM ({} on this CPU; the "
                       "kernel under test without a GPU)",
                       host::isa_name(here_.front()));
  }
  Space space() const override { return Space::Host; }
  Availability availability(const DeviceInfo&) const override { return {true, {}}; }
  void run(const Shape& s, const Operands& ops, void*, cudaStream_t) override {
    host::gemm(s, ops, isa_);
  }
  std::string configuration(const Shape&) const override { return host::isa_name(isa_); }
  std::vector<std::string> configurations(const Shape&) const override {
    std::vector<std::string> out;
    for (host::Isa isa : here_) out.push_back(host::isa_name(isa));
    return out;
  }
  std::string set_configuration(const std::string& config, const Shape& s) override {
    if (config.empty()) {
      isa_ = here_.front();
      return {};
    }
    host::Isa isa;
    if (!host::parse_isa(config, isa) ||
        std::find(here_.begin(), here_.end(), isa) == here_.end()) {
      std::string known;
      for (const std::string& c : configurations(s)) known += (known.empty() ? "" : ", ") + c;
      return fmt::format("not an instruction set this CPU runs (expected one of: {})", known);
    }
    isa_ = isa;
    return {};
  }

 private:
  std::vector<host::Isa> here_;  // fastest first
  host::Isa isa_;
};

}  // namespace

std::unique_ptr<Gemm> make_host_gemm() { return std::make_unique<HostGemm>(); }

}  // namespace nvfp4
