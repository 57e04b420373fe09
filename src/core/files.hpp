// Output files: checked before any work starts, written atomically, never one another or an
// input.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nvfp4 {

// Writes atomically (a temporary file in the same folder, then rename); an existing file keeps its
// mode, and one without write permission is not replaced (usage_error), nor is a path that is not
// a file path. A symbolic link is written through: its target is replaced, the link stays.
void write_text_file_atomic(const std::string& path, const std::string& text);

// Checks an output file path before any work starts: a file path (not "-", not a folder), a file
// name and path the system accepts (NAME_MAX, PATH_MAX), an existing writable folder, and an
// existing file only if it is a regular file with write permission (for a symbolic link: its
// target and the target's folder). Throws usage_error "FLAG PATH: why".
void check_output_file(const std::string& flag, const std::string& path);

// The most an input file may hold: a report of 10 000 cases with their samples fits many times.
inline constexpr int64_t kMaxInputBytes = int64_t(256) << 20;  // 256 MiB, docs/errors.md

// The whole of an input file (a config, a report, a sweep's JSONL): usage_error "PATH: is a
// folder, not a file", "PATH: not a regular file (a FIFO, a device or a socket); expected a
// regular file of at most 256 MiB", "PATH: N bytes; expected ..." or "PATH: cannot be read
// (why)". Never blocks on a FIFO, never reads without bound (/dev/zero). Every command's input
// goes through it.
std::string read_input_file(const std::string& path);

// True when a and b name the same file (the same inode when both exist, else the same
// normalized absolute path).
bool same_file(const std::string& a, const std::string& b);

// No output may be an input (the running executable always counts as one) or another output of
// the same command: throws usage_error naming both arguments. Each entry is (what, path), e.g. ("--json", "r.json") or ("BASE", "b.json").
using NamedPath = std::pair<std::string, std::string>;
void check_outputs_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace nvfp4
