#include "src/case/save_tensors.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "src/core/error.hpp"
#include "src/core/files.hpp"
#include "src/report/npy.hpp"

namespace nvfp4 {

const std::vector<std::string>& saved_tensor_files() {
  // What save_tensors writes (ref.npy only with a full reference output);
  // tests/cli/cli_test.py checks that a run writes exactly these.
  static const std::vector<std::string> files = {"a.npy", "b.npy", "sfa.npy", "sfb.npy",
                                                 "sfa_blocked.npy", "sfb_blocked.npy", "c.npy",
                                                 "ref.npy", "problem.json"};
  return files;
}

void save_tensors(const std::string& dir, const CaseSpec& spec, const HostTensors& h,
                  const std::vector<uint16_t>& c, const std::vector<uint16_t>* ref,
                  const std::string& kernel, const std::string& reference) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw usage_error(fmt::format("--save-tensors {}: cannot create ({})", dir, ec.message()));
  const Shape& s = spec.problem.shape;
  const int64_t kbs = s.k / kBlockSize;
  write_npy(dir + "/a.npy", NpyType::U8, {s.l, s.m, s.k / 2}, h.a.data(), h.a.size());
  write_npy(dir + "/b.npy", NpyType::U8, {s.l, s.n, s.k / 2}, h.b.data(), h.b.size());
  write_npy(dir + "/sfa.npy", NpyType::U8, {s.l, s.m, kbs}, h.sfa.data(), h.sfa.size());
  write_npy(dir + "/sfb.npy", NpyType::U8, {s.l, s.n, kbs}, h.sfb.data(), h.sfb.size());
  write_npy(dir + "/sfa_blocked.npy", NpyType::U8, {s.l, int64_t(h.sfa_blocked.size()) / s.l},
            h.sfa_blocked.data(), h.sfa_blocked.size());
  write_npy(dir + "/sfb_blocked.npy", NpyType::U8, {s.l, int64_t(h.sfb_blocked.size()) / s.l},
            h.sfb_blocked.data(), h.sfb_blocked.size());
  write_npy(dir + "/c.npy", NpyType::F16, {s.l, s.m, s.n}, c.data(), c.size() * 2);
  if (ref) write_npy(dir + "/ref.npy", NpyType::F16, {s.l, s.m, s.n}, ref->data(), ref->size() * 2);
  const nlohmann::json pj = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"l", s.l},
                             {"seed", spec.problem.seed}, {"dist", dist_name(spec.problem.dist)},
                             {"kernel", kernel}, {"reference", reference},
                             {"ref_npy", ref ? "full reference output" : "absent: sampled verification"}};
  write_text_file_atomic(dir + "/problem.json", pj.dump(2) + "\n");
}

}  // namespace nvfp4
