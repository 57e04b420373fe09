#include "src/sweep/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "src/core/error.hpp"
#include "src/registry/registry.hpp"
#include "src/registry/resolve.hpp"

namespace nvfp4::sweep {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// --kernels a,b: the names, each auto or a kernel of this process (built in, --kernel-lib,
// --kernel-py): an unknown one is refused here, not once per case.
std::vector<std::string> kernel_list(const std::string& text) {
  const std::vector<std::string> names = split_list(text);
  if (names.empty())
    throw usage_error(fmt::format("--kernels '{}': expected a comma-separated list of kernel names",
                                  text));
  const std::vector<std::string> known = names_of(Role::Kernel);
  for (const auto& n : names)
    if (n != "auto" && std::find(known.begin(), known.end(), n) == known.end())
      throw usage_error(fmt::format("--kernels: '{}' is not a kernel; expected auto or one of: {} "
                                    "(plugins and Python kernels: load them with --kernel-lib / "
                                    "--kernel-py before the subcommand)",
                                    n, fmt::join(known, ", ")));
  return names;
}

}  // namespace

SweepConfig load_sweep_config(const SweepOptions& o) {
  SweepConfig cfg = o.kernels ? load_config(o.config_path, kernel_list(*o.kernels))
                              : load_config(o.config_path);
  if (o.peers) {  // --peers on the sweep's command line replaces the config's peers
    const auto peers = *o.peers == "none" ? std::vector<std::string>{} : split_list(*o.peers);
    (void)resolve_peer_names(peers);  // an unknown name: refused here, not once per child
    for (auto& c : cfg.cases) c.peers = peers;
    cfg.hash = config_hash(cfg.cases);
  }
  return cfg;
}

}  // namespace nvfp4::sweep
