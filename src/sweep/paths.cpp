#include "src/sweep/paths.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/core/number_text.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"

namespace nvfp4::sweep {

namespace fs = std::filesystem;

namespace {

std::string default_report_path(const SweepOptions& o, const Shard& shard) {
  std::string stem = "sweep-" + fs::path(o.config_path).stem().string();
  if (!shard.whole()) stem += fmt::format(".shard-{}-of-{}", shard.index, shard.count);
  return stem + ".json";
}

std::string jsonl_path_for(const std::string& report) {
  fs::path p(report);
  return (p.extension() == ".json" ? p.replace_extension(".jsonl") : fs::path(report + ".jsonl"))
      .string();
}

}  // namespace

OutputPaths output_paths(const SweepOptions& o, const Shard& shard) {
  OutputPaths out;
  out.report = o.json_path.empty() ? default_report_path(o, shard) : o.json_path;
  out.jsonl = o.jsonl_path.empty() ? jsonl_path_for(out.report) : o.jsonl_path;
  // A path the user did not give is named as what it is, not under a flag they never typed.
  const std::string report_flag =
      o.json_path.empty() ? "the default report (choose another with --json)" : "--json";
  const std::string jsonl_flag =
      o.jsonl_path.empty()
          ? "the record file (the report's path with .jsonl; choose another with --jsonl)"
          : "--jsonl";
  // First the paths themselves (PATH_MAX, NAME_MAX, folder, kind), then what they are.
  check_output_file(report_flag, out.report);
  check_output_file(jsonl_flag, out.jsonl);
  for (const std::string& p : {out.report, out.jsonl}) {
    std::error_code ec;
    if (fs::equivalent(p, o.config_path, ec))
      throw usage_error(
          fmt::format("--json/--jsonl {}: is the config itself; choose another path", p));
  }
  out.formatted = o.output;
  if (!out.formatted.empty()) check_output_file("--output", out.formatted);
  std::vector<NamedPath> inputs = {{"the config", o.config_path}};
  for (const auto& lib : loaded_kernel_libraries()) inputs.push_back({"--kernel-lib", lib});
  for (const auto& py : loaded_python_kernels())  // PATH:FUNCTION
    inputs.push_back({"--kernel-py", py.substr(0, py.rfind(':'))});
  std::vector<NamedPath> outputs = {{report_flag, out.report}, {jsonl_flag, out.jsonl}};
  if (!out.formatted.empty()) outputs.push_back({"--output", out.formatted});
  check_outputs_distinct(outputs, inputs);
  std::error_code ec;
  out.logs_dir =
      (fs::absolute(out.report, ec).parent_path() / (fs::path(out.report).stem().string() + ".logs"))
          .string();
  // A failed case's log goes there: refused now rather than lost then.
  if (fs::exists(out.logs_dir, ec) && !fs::is_directory(out.logs_dir, ec))
    throw usage_error(fmt::format("{}: not a folder, where the failed cases' logs go; move it, or "
                                  "give the report another name", out.logs_dir));
  return out;
}

namespace {

constexpr const char* kTmpPrefix = "nvfp4bench-sweep-";

// Folders of sweeps that were killed (SIGKILL, a node that went down) are left behind: the next
// sweep removes those of its user whose process is gone. The owner's pid is in the name.
void remove_stale_tmpdirs(const fs::path& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kTmpPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::strlen(kTmpPrefix));
    const size_t dash = rest.find('-');
    pid_t pid = 0;
    if (dash == std::string::npos ||
        !integer_text_problem<pid_t>(rest.substr(0, dash), &pid).empty() || pid <= 0)
      continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
      continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to ask): kept
    std::error_code rm;
    fs::remove_all(e.path(), rm);
  }
}

std::string make_tmpdir_in(const std::string& root) {
  remove_stale_tmpdirs(root);
  std::string s = fmt::format("{}/{}{}-XXXXXX", root, kTmpPrefix, ::getpid());
  std::vector<char> buf(s.begin(), s.end());
  buf.push_back('\0');
  return mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

}  // namespace

std::string make_tmpdir() {
  if (const char* t = std::getenv("TMPDIR"); t && *t)
    if (std::string d = make_tmpdir_in(t); !d.empty()) return d;
  std::string d = make_tmpdir_in("/tmp");
  if (d.empty()) throw runtime_error("cannot create a temporary folder for the cases' reports");
  return d;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

}  // namespace nvfp4::sweep
