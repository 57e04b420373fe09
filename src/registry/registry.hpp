// The registry: every implementation the tool knows, by name and role (built-in ones listed in
// src/registry/registry.cpp, plugins added at run time by src/registry/plugin_loader.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/gemm/gemm.hpp"

namespace nvfp4 {

// A function, or a closure for implementations registered at run time (plugins).
using GemmFactory = std::function<std::unique_ptr<Gemm>()>;

struct RegistryEntry {
  std::string name;
  Role role;
  GemmFactory make;
};

// Every implementation the tool knows (src/registry/registry.cpp, one line each).
const std::vector<RegistryEntry>& registry();
// A fresh instance of the named implementation of that role, or nullptr.
std::unique_ptr<Gemm> make_gemm(const std::string& name, Role role);
std::vector<std::string> names_of(Role role);
// Adds an implementation found at run time (src/registry/plugin_loader.cpp), before any case
// runs. Names are unique across roles: returns false, registering nothing, when it is taken.
bool register_gemm(RegistryEntry entry);
bool gemm_name_taken(const std::string& name);

}  // namespace nvfp4
