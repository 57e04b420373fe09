// Every implementation the tool knows: adding one is one line here.
#include "src/registry/registry.hpp"
#include "kernels/peers/peers.hpp"
#include "kernels/reference/cpu_exact.hpp"
#include "kernels/reference/cublaslt_references.hpp"

namespace nvfp4 {

std::unique_ptr<Gemm> make_naive_gemm();
std::unique_ptr<Gemm> make_host_gemm();
std::unique_ptr<Gemm> make_sm90_gemm();   // kernels/sm90 (sm_90a only): per shape the faster path
std::unique_ptr<Gemm> make_sm90_fused_gemm();      // ... its fused path only
std::unique_ptr<Gemm> make_sm90_two_phase_gemm();  // ... its two-phase path only
std::unique_ptr<Gemm> make_sm90_mainloop_peer();   // ... its fp16 mainloop alone (a peer)
std::unique_ptr<Gemm> make_sm100_gemm();  // kernels/sm100/sm100.cu (sm_100a only)

namespace {
std::vector<RegistryEntry>& entries() {
  static std::vector<RegistryEntry> all = [] {
    const GemmFactory factories[] = {
        // kernels under test
        make_naive_gemm,
        make_host_gemm,
        make_sm90_gemm,
        make_sm90_fused_gemm,
        make_sm90_two_phase_gemm,
        make_sm100_gemm,
        // references (--reference auto: the available one of highest auto_rank)
        make_cublaslt_nvfp4_reference,
        make_cublaslt_f16_reference,
        make_cpu_exact_reference,
        // peers (peers/peers.hpp lists what each one is)
        make_cublaslt_nvfp4_peer,
        make_dequant_f16_peer,
        make_f16_predeq_peer,
        make_bf16_predeq_peer,
        make_fp8_tensor_peer,
        make_fp8_block_peer,
        make_sm90_mainloop_peer,
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
