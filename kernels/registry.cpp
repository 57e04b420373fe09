// Every implementation the tool knows: adding one is one line here.
#include "kernels/kernel.hpp"
#include "reference/cpu_exact.hpp"

namespace nvfp4 {

std::unique_ptr<Gemm> make_naive_gemm();
std::unique_ptr<Gemm> make_host_gemm();

namespace {
std::vector<RegistryEntry>& entries() {
  static std::vector<RegistryEntry> all = [] {
    const GemmFactory factories[] = {
        // kernels under test
        make_naive_gemm,
        make_host_gemm,
        // references
        make_cpu_exact_reference,
    };
    std::vector<RegistryEntry> out;
    for (const GemmFactory& f : factories) {
      const auto g = f();
      out.push_back({g->name(), g->role(), f});
    }
    return out;
  }();
  return all;
}
}  // namespace

const std::vector<RegistryEntry>& registry() { return entries(); }

bool gemm_name_taken(const std::string& name) {
  for (const auto& e : registry())
    if (e.name == name) return true;
  return false;
}

bool register_gemm(RegistryEntry entry) {
  if (gemm_name_taken(entry.name)) return false;
  entries().push_back(std::move(entry));
  return true;
}

std::unique_ptr<Gemm> make_gemm(const std::string& name, Role role) {
  for (const auto& e : registry())
    if (e.name == name && e.role == role) return e.make();
  return nullptr;
}

std::vector<std::string> names_of(Role role) {
  std::vector<std::string> out;
  for (const auto& e : registry())
    if (e.role == role) out.push_back(e.name);
  return out;
}

}  // namespace nvfp4
