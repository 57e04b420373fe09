#include "src/registry/resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "src/core/error.hpp"
#include "src/registry/registry.hpp"

namespace nvfp4 {

namespace {

const char* role_word(Role r) {
  return r == Role::Kernel ? "kernel" : r == Role::Reference ? "reference" : "peer";
}

std::string list_names(Role role) {
  std::string out = "auto";
  for (const auto& n : names_of(role)) out += ", " + n;
  return out;
}

}  // namespace

Availability usable_here(const Gemm& g, const DeviceInfo& dev) {
  Availability a = g.availability(dev);
  if (!a.ok) return a;
  // A host reference also serves a GPU run (run_case copies the inputs back); a host kernel
  // does not: the GPU path hands kernels device pointers.
  if (!dev.has_gpu && g.space() == Space::Device) return {false, "needs a CUDA device"};
  if (dev.has_gpu && g.space() == Space::Host && g.role() == Role::Kernel)
    return {false, "a host kernel runs only on the host backend (no CUDA device)"};
  return a;
}

std::unique_ptr<Gemm> resolve(const std::string& field, const std::string& name, Role role,
                              const Shape& shape, const DeviceInfo& dev) {
  const std::string where =
      dev.has_gpu ? fmt::format("GPU '{}' (compute capability {})", dev.name, dev.cc_string())
                : std::string("this machine (no CUDA device)");
  if (name == "auto") {
    std::unique_ptr<Gemm> best;
    std::string why_not;
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      auto g = e.make();
      if (!usable_here(*g, dev).ok) continue;
      if (const std::string se = g->shape_error(shape); !se.empty()) {
        why_not += fmt::format(" {}: {};", g->name(), se);
        continue;
      }
      if (!best || g->auto_rank() > best->auto_rank()) best = std::move(g);
    }
    if (!best)
      throw usage_error(fmt::format("{} auto: no {} can run {}x{}x{} L={} on {}:{}", field,
                                    role_word(role), shape.m, shape.n, shape.k, shape.l, where,
                                    why_not));
    return best;
  }
  auto g = make_gemm(name, role);
  if (!g)
    throw usage_error(fmt::format("{} '{}': unknown {}; expected one of: {}", field, name,
                                  role_word(role), list_names(role)));
  if (const Availability a = usable_here(*g, dev); !a.ok) {
    std::string can;
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      auto other = e.make();
      if (usable_here(*other, dev).ok) can += (can.empty() ? "" : ", ") + other->name();
    }
    throw usage_error(fmt::format("{} '{}' cannot run on {}: {}; {}s that can run here: {}", field,
                                  name, where, a.reason, role_word(role), can.empty() ? "none" : can));
  }
  if (const std::string se = g->shape_error(shape); !se.empty())
    throw usage_error(fmt::format("{} '{}' does not support {}x{}x{} L={}: {}", field, name,
                                  shape.m, shape.n, shape.k, shape.l, se));
  return g;
}

void pin_configuration(Gemm& g, const std::string& config, const Shape& s) {
  if (config.empty()) return;
  if (const std::string why = g.set_configuration(config, s); !why.empty())
    throw usage_error(fmt::format("--kernel-config '{}': {}; see --list-configs", config, why));
}

std::vector<std::string> resolve_peer_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& p : names_of(Role::Peer))
        if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      continue;
    }
    if (!make_gemm(n, Role::Peer))
      throw usage_error(fmt::format("--peers '{}': unknown peer; expected all or a list of: {}", n,
                                    fmt::join(names_of(Role::Peer), ", ")));
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

}  // namespace nvfp4
