// Choosing a reference: which can run here, and the one-line message when the chosen one cannot
// (the runner prints it and exits 2).
#pragma once

#include <string>
#include <vector>

namespace nvfp4 {

struct DeviceInfo;

// Names of the references available on `dev`, highest auto_rank first (what --reference auto
// picks is the first).
std::vector<std::string> runnable_references(const DeviceInfo& dev);

// "reference 'X' cannot run on GPU 'NVIDIA H200' (compute capability 9.0): <reason>;
// references that can run here: a, b". For an unknown name: "reference 'X' is not known;
// references: a, b, c". Without a GPU the machine is described as "this machine (no CUDA GPU:
// <why>)".
std::string reference_unavailable_message(const std::string& name, const DeviceInfo& dev);

}  // namespace nvfp4
