#include "reference/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "device/device_info.hpp"
#include "kernels/kernel.hpp"

namespace nvfp4 {

std::vector<std::string> runnable_references(const DeviceInfo& dev) {
  std::vector<std::pair<int, std::string>> ok;
  for (const std::string& name : names_of(Role::Reference)) {
    const auto g = make_gemm(name, Role::Reference);
    if (g && g->availability(dev).ok) ok.emplace_back(g->auto_rank(), name);
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> out;
  for (auto& p : ok) out.push_back(std::move(p.second));
  return out;
}

std::string reference_unavailable_message(const std::string& name, const DeviceInfo& dev) {
  const auto g = make_gemm(name, Role::Reference);
  if (!g)
    return fmt::format("reference '{}' is not known; references: {}", name,
                       fmt::join(names_of(Role::Reference), ", "));
  const std::string where =
      dev.has_gpu ? fmt::format("GPU '{}' (compute capability {})", dev.name, dev.cc_string())
                  : fmt::format("this machine (no CUDA GPU: {})", dev.no_gpu_reason);
  const auto av = g->availability(dev);
  if (av.ok) return fmt::format("reference '{}' can run on {}", name, where);
  const std::vector<std::string> can = runnable_references(dev);
  return fmt::format("reference '{}' cannot run on {}: {}; references that can run here: {}", name,
                     where, av.reason,
                     can.empty() ? std::string("none") : fmt::format("{}", fmt::join(can, ", ")));
}

}  // namespace nvfp4
