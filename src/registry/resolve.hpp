// From a name on the command line to an implementation that can run here: the one rule for
// what runs on this backend (also what --list shows), "auto", and messages that say what would.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/device/device_info.hpp"
#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// Whether `g` can run on this machine: its own availability, then the backend (device
// implementations need a GPU; without one only host implementations run, and with one a host
// kernel does not). The reason says what is missing.
Availability usable_here(const Gemm& g, const DeviceInfo& dev);

// Name resolution; throw usage_error (exit 2) with one line naming the field and what is allowed.
std::unique_ptr<Gemm> resolve(const std::string& field, const std::string& name, Role role,
                              const Shape& shape, const DeviceInfo& dev);

// --kernel-config: pins `config` on `g` for shape `s` (nothing for ""); throws usage_error
// "--kernel-config 'CONFIG': REASON; see --list-configs" when the kernel refuses it.
void pin_configuration(Gemm& g, const std::string& config, const Shape& s);

// Expands "all" and checks every peer name; throws usage_error for an unknown one.
std::vector<std::string> resolve_peer_names(const std::vector<std::string>& names);

}  // namespace nvfp4
