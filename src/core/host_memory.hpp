// How much host memory a case may allocate, checked before allocating: with overcommit a huge
// std::vector does not fail cleanly, it gets the process killed later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvfp4 {

// Bytes available now: MemAvailable (or free physical pages), capped by a cgroup v2 limit.
int64_t host_memory_available();

// Throws runtime_error (exit 3) "out of host memory: WHAT needs X GiB, Y GiB available" when
// `bytes` exceeds what is available.
void require_host_memory(int64_t bytes, const std::string& what);

// Copies `bytes` of this process's memory from `src` to `dst` with the operating system doing the
// reading (process_vm_readv on this process; where a seccomp filter refuses it, write(2) into a
// pipe made for this read alone): a page that is protected, unmapped or left to a fault handler
// of user code makes it return false instead of raising a signal or running that handler, and no
// file descriptor a kernel could find and fill makes it wait. How the verdict reads what a host
// kernel wrote (docs/cli.md, "The verdict").
bool copy_without_faults(void* dst, const void* src, size_t bytes);

// "1.5 GiB" and the like, for messages.
std::string byte_text(double bytes);

}  // namespace nvfp4
