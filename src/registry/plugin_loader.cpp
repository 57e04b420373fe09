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

// A line a plugin wrote into `buf` (one_line of it).
std::string text_of(const std::array<char, kMessageBytes>& buf) { return one_line(buf.data(), buf.size()); }

// A plugin's reason, as it goes into the tool's one line: at most kMessageShown characters, and
// said when cut (the buffer holds up to 1 KB).
constexpr size_t kMessageShown = 300;
std::string message_of(const char* msg, size_t size) {
  std::string s = one_line(msg, size);
  if (s.size() <= kMessageShown) return s;
  const size_t whole = s.size();
  s.resize(kMessageShown);
  return fmt::format("{}... (cut: the plugin's message is {} characters, the first {} shown)", s,
                     whole, kMessageShown);
}

// The most workspace a plugin may ask for: more than any machine's memory, and far from where
// the sums of byte counts would overflow.
constexpr size_t kMaxWorkspaceBytes = size_t(1) << 50;  // 1 PiB

constexpr uint32_t kMaxConfigs = 1024;  // what the tool asks a plugin for at most

class PluginGemm final : public Gemm {
 public:
  PluginGemm(std::string library, const nvfp4bench_kernel& k, const nvfp4bench_kernel_configs* c)
      : library_(std::move(library)), k_(k), configs_(c), name_(k.name),
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
    const std::string why = message_of(msg.data(), msg.size());
    return why.empty() ? "rejected by the plugin's shape check" : why;
  }
  size_t workspace_bytes(const Shape& s) const override {
    const nvfp4bench_problem p = to_c(s);
    size_t bytes = 0;
    if (k_.workspace_bytes)
      guard::call(who("workspace_bytes"), [&] { bytes = k_.workspace_bytes(k_.user_data, &p); });
    if (bytes > kMaxWorkspaceBytes)
      throw usage_error(fmt::format("kernel '{}' (plugin {}): workspace_bytes asked for {} bytes "
                                    "for {}x{}x{} L={}; expected at most {} (1 PiB)",
                                    name_, library_, bytes, s.m, s.n, s.k, s.l, kMaxWorkspaceBytes));
    return bytes;
  }
  std::vector<std::string> configurations(const Shape& s) const override {
    std::vector<std::string> out;
    if (!configs_) return out;
    const nvfp4bench_problem p = to_c(s);
    for (uint32_t i = 0; i < kMaxConfigs; ++i) {
      std::array<char, kMessageBytes> buf{};
      int32_t st = NVFP4BENCH_OK;
      guard::call(who("configs.list"), [&] { st = configs_->list(k_.user_data, &p, i, buf.data(), buf.size()); });
      if (st != NVFP4BENCH_OK) break;
      out.push_back(text_of(buf));
    }
    return out;
  }
  std::string set_configuration(const std::string& config, const Shape& s) override {
    if (!configs_) return Gemm::set_configuration(config, s);
    if (std::string why = call_set(config, s); !why.empty()) return why;
    pinned_ = config;
    return {};
  }
  std::string configuration(const Shape& s) const override {
    if (!configs_ || !configs_->current) return pinned_;
    // The plugin's state may still hold another instance's pin: this one's first.
    if (!call_set(pinned_, s).empty()) return pinned_;
    std::array<char, kMessageBytes> buf{};
    const nvfp4bench_problem p = to_c(s);
    int32_t st = NVFP4BENCH_OK;
    guard::call(who("configs.current"), [&] { st = configs_->current(k_.user_data, &p, buf.data(), buf.size()); });
    return st == NVFP4BENCH_OK ? text_of(buf) : pinned_;
  }
  // The plugin's state is shared by every instance of the kernel: each case sets its own pin
  // ("" when none) before its first run, so one case's pin never carries into the next.
  void prepare(const Shape& s, const Operands&, cudaStream_t) override {
    if (!configs_) return;
    if (const std::string why = call_set(pinned_, s); !why.empty())
      throw runtime_error(fmt::format("kernel '{}' (plugin {}): configuration '{}' accepted, then "
                                      "refused: {}", name_, library_, pinned_, why));
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
      const std::string why = message_of(msg.data(), msg.size());
      throw runtime_error(fmt::format("kernel '{}' (plugin {}) failed with status {}: {}", name_,
                                      library_, st, why.empty() ? "no message" : why));
    }
  }

 private:
  // "" when the plugin accepts `config` for `s`, else its reason.
  std::string call_set(const std::string& config, const Shape& s) const {
    std::array<char, kMessageBytes> msg{};
    const nvfp4bench_problem p = to_c(s);
    int32_t st = NVFP4BENCH_OK;
    guard::call(who("configs.set"), [&] {
      st = configs_->set(k_.user_data, config.c_str(), &p, msg.data(), msg.size());
    });
    if (st == NVFP4BENCH_OK) return {};
    const std::string why = message_of(msg.data(), msg.size());
    return why.empty() ? "refused by the plugin" : why;
  }
  // Who a guarded callback is, for the line when it ends the process (guard.hpp).
  std::string who(const char* callback) const {
    return fmt::format("kernel '{}' (plugin {}, in {})", name_, library_, callback);
  }
  static std::string cc_text(int32_t cc) {
    return cc > 0 ? fmt::format("{}.{}", cc / 10, cc % 10) : std::string("any");
  }
  std::string library_;
  nvfp4bench_kernel k_;  // copied: callbacks and user_data live in the library, loaded for good
  const nvfp4bench_kernel_configs* configs_;  // the plugin's (it lives as long); null: none
  std::string pinned_;  // set_configuration's; "" the kernel's own choice
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

// The optional configurations table (include/nvfp4bench/plugin.h), per kernel of `names` (null:
// none); a table that names a kernel the plugin lacks, twice, or lacks a required callback is
// refused like a malformed kernel table.
template <class Bad>
std::vector<const nvfp4bench_kernel_configs*> configs_of(void* handle, const std::string& path,
                                                         const std::vector<std::string>& names,
                                                         const Bad& bad) {
  std::vector<const nvfp4bench_kernel_configs*> out(names.size(), nullptr);
  void* sym = dlsym(handle, NVFP4BENCH_PLUGIN_CONFIGS_SYMBOL);
  if (!sym) return out;  // a plugin without configurations
  const nvfp4bench_plugin_configs* t = nullptr;
  guard::call(fmt::format("--kernel-lib {} (in {}())", path, NVFP4BENCH_PLUGIN_CONFIGS_SYMBOL),
              [&] { t = reinterpret_cast<nvfp4bench_plugin_configs_fn>(sym)(); });
  if (!t || (t->count > 0 && !t->kernels))
    throw bad(fmt::format("{}() returned no table", NVFP4BENCH_PLUGIN_CONFIGS_SYMBOL));
  for (uint32_t i = 0; i < t->count; ++i) {
    const nvfp4bench_kernel_configs& c = t->kernels[i];
    const std::string name = c.kernel ? std::string(c.kernel, strnlen(c.kernel, 65)) : "(null)";
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw bad(fmt::format("configurations #{}: '{}' is not a kernel of this plugin", i, one_line(name.c_str(), name.size())));
    const size_t k = size_t(it - names.begin());
    if (out[k]) throw bad(fmt::format("configurations #{}: kernel '{}' is listed twice", i, name));
    if (!c.list || !c.set)
      throw bad(fmt::format("configurations of '{}': list and set are required", name));
    out[k] = &c;
  }
  return out;
}

}  // namespace

std::vector<std::string> load_kernel_library(const std::string& path) {
  namespace fs = std::filesystem;
  const auto bad = [&](const std::string& what) {
    return usage_error(fmt::format("--kernel-lib {}: {}", path, what));
  };
  std::error_code ec;
  if (!fs::exists(path, ec)) throw bad(ec ? "cannot be read (" + ec.message() + ")" : "no such file");
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
                          "against this include/nvfp4bench/plugin.h", table->abi_version,
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
  const std::vector<const nvfp4bench_kernel_configs*> configs = configs_of(handle, path, names, bad);
  for (uint32_t i = 0; i < table->kernel_count; ++i) {
    const nvfp4bench_kernel k = table->kernels[i];
    const nvfp4bench_kernel_configs* c = configs[i];
    const bool added = register_gemm({k.name, Role::Kernel, [abs, k, c]() -> std::unique_ptr<Gemm> {
                                        return std::make_unique<PluginGemm>(abs, k, c);
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
