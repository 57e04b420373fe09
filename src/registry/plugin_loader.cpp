#include "src/registry/plugin_loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <memory>

#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/device/device_info.hpp"
#include "src/registry/registry.hpp"
#include "include/nvfp4bench/plugin.h"

namespace nvfp4 {
namespace {

constexpr size_t kMessageBytes = 1024;

// A plugin's message as one printable line (it may hold newlines or no terminator).
std::string one_line(const char* msg, size_t size) {
  std::string s(msg, strnlen(msg, size));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

nvfp4bench_problem to_c(const Shape& s) { return {s.m, s.n, s.k, s.l}; }

class PluginGemm final : public Gemm {
 public:
  PluginGemm(std::string library, const nvfp4bench_kernel& k)
      : library_(std::move(library)), k_(k), name_(k.name),
        description_(k.description ? k.description : "") {}

  std::string name() const override { return name_; }
  std::string description() const override {
    return fmt::format("{}{}[plugin {}]", description_, description_.empty() ? "" : " ", library_);
  }
  Space space() const override {
    return k_.space == NVFP4BENCH_SPACE_HOST ? Space::Host : Space::Device;
  }
  Availability availability(const DeviceInfo& dev) const override {
    if (space() == Space::Host) return {true, {}};
    if (!dev.has_gpu) return {false, "needs a CUDA device"};
    const int cc = dev.cc();
    if ((k_.min_cc > 0 && cc < k_.min_cc) || (k_.max_cc > 0 && cc > k_.max_cc))
      return {false, fmt::format("built for compute capability {} to {}, this GPU is {}",
                                 cc_text(k_.min_cc), cc_text(k_.max_cc), dev.cc_string())};
    return {true, {}};
  }
  std::string shape_error(const Shape& s) const override {
    if (!k_.shape_check) return {};
    std::array<char, kMessageBytes> msg{};
    const nvfp4bench_problem p = to_c(s);
    int32_t st = NVFP4BENCH_OK;
    guard::call(who("shape_check"), [&] { st = k_.shape_check(k_.user_data, &p, msg.data(), msg.size()); });
    if (st == NVFP4BENCH_OK) return {};
    const std::string why = one_line(msg.data(), msg.size());
    return why.empty() ? "rejected by the plugin's shape check" : why;
  }
  size_t workspace_bytes(const Shape& s) const override {
    const nvfp4bench_problem p = to_c(s);
    size_t bytes = 0;
    if (k_.workspace_bytes)
      guard::call(who("workspace_bytes"), [&] { bytes = k_.workspace_bytes(k_.user_data, &p); });
    return bytes;
  }
  void run(const Shape& s, const Operands& o, void* workspace, cudaStream_t stream) override {
    const nvfp4bench_problem p = to_c(s);
    const nvfp4bench_operands ops{o.a, o.b, o.sfa, o.sfb, o.sfa_blocked, o.sfb_blocked, o.c};
    std::array<char, kMessageBytes> msg{};
    int32_t st = NVFP4BENCH_OK;
    guard::call(who_run_, [&] {
      st = k_.run(k_.user_data, &p, &ops, workspace, static_cast<void*>(stream), msg.data(), msg.size());
    });
    if (st != NVFP4BENCH_OK) {
      const std::string why = one_line(msg.data(), msg.size());
      throw runtime_error(fmt::format("kernel '{}' (plugin {}) failed with status {}: {}", name_,
                                      library_, st, why.empty() ? "no message" : why));
    }
  }

 private:
  // Who a guarded callback is, for the line when it ends the process (guard.hpp).
  std::string who(const char* callback) const {
    return fmt::format("kernel '{}' (plugin {}, in {})", name_, library_, callback);
  }
  static std::string cc_text(int32_t cc) {
    return cc > 0 ? fmt::format("{}.{}", cc / 10, cc % 10) : std::string("any");
  }
  std::string library_;
  nvfp4bench_kernel k_;  // copied: callbacks and user_data live in the library, loaded for good
  std::string name_, description_;
  std::string who_run_ = who("run");  // built once: run() is timed
};

struct Loaded {
  std::string path;  // absolute
  std::vector<std::string> names;
};
std::vector<Loaded>& loaded() {
  static std::vector<Loaded> all;
  return all;
}

bool valid_name(const char* name) {
  if (!name) return false;
  const size_t n = strnlen(name, 65);
  if (n == 0 || n > 64) return false;
  return std::all_of(name, name + n, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '+' || c == ':' || c == '-';
  });
}

}  // namespace

std::vector<std::string> load_kernel_library(const std::string& path) {
  namespace fs = std::filesystem;
  const auto bad = [&](const std::string& what) {
    return usage_error(fmt::format("--kernel-lib {}: {}", path, what));
  };
  std::error_code ec;
  if (!fs::exists(path, ec)) throw bad("no such file");
  if (!fs::is_regular_file(path, ec)) throw bad("not a regular file");
  // An absolute path, so dlopen never searches LD_LIBRARY_PATH for a name the user did not mean.
  const std::string abs = fs::weakly_canonical(fs::absolute(path, ec), ec).string();
  for (const Loaded& l : loaded())
    if (l.path == abs) return l.names;
  // The handle is never closed: kernels (and CUDA modules) stay valid until exit.
  // Loading runs the library's constructors and its entry: foreign code, guarded.
  void* handle = nullptr;
  guard::call(fmt::format("--kernel-lib {} (while loading)", path),
              [&] { handle = dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL); });
  if (!handle) {
    const char* e = dlerror();
    throw bad(fmt::format("cannot load as a shared library: {}", e ? e : "unknown dlopen error"));
  }
  dlerror();
  void* sym = dlsym(handle, NVFP4BENCH_PLUGIN_ENTRY_SYMBOL);
  if (!sym)
    throw bad(fmt::format("not an nvfp4bench plugin: it does not export {}() (see "
                          "include/nvfp4bench/plugin.h)", NVFP4BENCH_PLUGIN_ENTRY_SYMBOL));
  const auto entry = reinterpret_cast<nvfp4bench_plugin_entry_fn>(sym);
  const nvfp4bench_plugin* table = nullptr;
  guard::call(fmt::format("--kernel-lib {} (in {}())", path, NVFP4BENCH_PLUGIN_ENTRY_SYMBOL),
              [&] { table = entry(); });
  if (!table) throw bad(fmt::format("{}() returned NULL", NVFP4BENCH_PLUGIN_ENTRY_SYMBOL));
  if (table->abi_version != NVFP4BENCH_PLUGIN_ABI_VERSION)
    throw bad(fmt::format("plugin ABI version {}, this tool speaks version {}: rebuild the plugin "
                          "against this nvfp4bench_plugin.h", table->abi_version,
                          NVFP4BENCH_PLUGIN_ABI_VERSION));
  if (table->kernel_count == 0 || !table->kernels) throw bad("its table lists no kernels");

  // Check the whole table before registering any of it.
  std::vector<std::string> names;
  for (uint32_t i = 0; i < table->kernel_count; ++i) {
    const nvfp4bench_kernel& k = table->kernels[i];
    if (!valid_name(k.name))
      throw bad(fmt::format("kernel #{}: name must be 1 to 64 characters from [A-Za-z0-9._+:-]", i));
    if (k.space != NVFP4BENCH_SPACE_DEVICE && k.space != NVFP4BENCH_SPACE_HOST)
      throw bad(fmt::format("kernel '{}': space {} is neither NVFP4BENCH_SPACE_DEVICE (0) nor "
                            "NVFP4BENCH_SPACE_HOST (1)", k.name, k.space));
    if (k.min_cc < 0 || k.max_cc < 0 || (k.max_cc > 0 && k.min_cc > k.max_cc))
      throw bad(fmt::format("kernel '{}': compute capability range {}..{} is empty", k.name,
                            k.min_cc, k.max_cc));
    if (!k.run) throw bad(fmt::format("kernel '{}': run is NULL", k.name));
    if (gemm_name_taken(k.name) || std::find(names.begin(), names.end(), k.name) != names.end())
      throw bad(fmt::format("kernel '{}': the name is already taken (built-in or loaded before); "
                            "rename it in the plugin", k.name));
    names.emplace_back(k.name);
  }
  for (uint32_t i = 0; i < table->kernel_count; ++i) {
    const nvfp4bench_kernel k = table->kernels[i];
    const bool added = register_gemm({k.name, Role::Kernel, [abs, k]() -> std::unique_ptr<Gemm> {
                                        return std::make_unique<PluginGemm>(abs, k);
                                      }});
    if (!added) throw bad(fmt::format("kernel '{}': the name is already taken", k.name));
  }
  loaded().push_back({abs, names});
  return names;
}

std::vector<std::string> loaded_kernel_libraries() {
  std::vector<std::string> out;
  for (const Loaded& l : loaded()) out.push_back(l.path);
  return out;
}

}  // namespace nvfp4
