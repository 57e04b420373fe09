// How much host memory a case may allocate, checked before allocating: with overcommit a huge
// std::vector does not fail cleanly, it gets the process killed later.
#pragma once

#include <cstdint>
#include <string>

namespace nvfp4 {

// Bytes available now: MemAvailable (or free physical pages), capped by a cgroup v2 limit.
int64_t host_memory_available();

// Throws runtime_error (exit 3) "out of host memory: WHAT needs X GiB, Y GiB available" when
// `bytes` exceeds what is available.
void require_host_memory(int64_t bytes, const std::string& what);

// "1.5 GiB" and the like, for messages.
std::string byte_text(double bytes);

}  // namespace nvfp4
