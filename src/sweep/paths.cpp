#include "src/sweep/paths.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/python/python_kernels.hpp"
#include "src/registry/plugin_loader.hpp"

namespace nvfp4::sweep {

namespace fs = std::filesystem;

namespace {

void check_writable_folder(const std::string& flag, const std::string& path) {
  const fs::path parent = fs::absolute(path).parent_path();
  if (!fs::is_directory(parent) || access(parent.c_str(), W_OK) != 0)
    throw usage_error(fmt::format("{} {}: folder {} does not exist or is not writable", flag, path,
                                  parent.string()));
}

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
  for (const std::string& p : {out.report, out.jsonl}) {
    std::error_code ec;
    if (fs::equivalent(p, o.config_path, ec))
      throw usage_error(
          fmt::format("--json/--jsonl {}: is the config itself; choose another path", p));
  }
  check_writable_folder("--json", out.report);
  check_writable_folder("--jsonl", out.jsonl);
  check_output_file("--json", out.report);
  check_output_file("--jsonl", out.jsonl);
  out.formatted = o.output;
  if (!out.formatted.empty()) check_output_file("--output", out.formatted);
  std::vector<NamedPath> inputs = {{"the config", o.config_path}};
  for (const auto& lib : loaded_kernel_libraries()) inputs.push_back({"--kernel-lib", lib});
  for (const auto& py : loaded_python_kernels())  // PATH:FUNCTION
    inputs.push_back({"--kernel-py", py.substr(0, py.rfind(':'))});
  std::vector<NamedPath> outputs = {{"--json", out.report}, {"--jsonl", out.jsonl}};
  if (!out.formatted.empty()) outputs.push_back({"--output", out.formatted});
  check_outputs_distinct(outputs, inputs);
  out.logs_dir =
      (fs::absolute(out.report).parent_path() / (fs::path(out.report).stem().string() + ".logs"))
          .string();
  return out;
}

std::string make_tmpdir() {
  if (const char* t = std::getenv("TMPDIR"); t && *t) {
    std::string s = std::string(t) + "/nvfp4bench-sweep-XXXXXX";
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) return buf.data();
  }
  char tmpl[] = "/tmp/nvfp4bench-sweep-XXXXXX";
  if (!mkdtemp(tmpl)) throw runtime_error("cannot create a temporary folder for the cases' reports");
  return tmpl;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

}  // namespace nvfp4::sweep
