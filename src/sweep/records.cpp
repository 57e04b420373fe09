#include "src/sweep/records.hpp"

#include <sstream>

#include "src/core/error.hpp"
#include "src/report/json_writer.hpp"

namespace nvfp4::sweep {

using nlohmann::json;

json disposition_counts(const json& cases) {
  json counts = {{"passed", 0}, {"incorrect", 0}, {"not_supported", 0}, {"error", 0}};
  for (const auto& c : cases) {
    const std::string d = c.value("disposition", "error");
    counts[counts.contains(d) ? d : "error"] =
        counts[counts.contains(d) ? d : "error"].get<int>() + 1;
  }
  return counts;
}

int exit_code_for(const json& cases, bool complete) {
  const json n = disposition_counts(cases);
  if (n["incorrect"].get<int>() > 0) return kExitVerifyFailed;
  if (n["error"].get<int>() > 0 || !complete) return kExitRuntime;
  if (n["not_supported"].get<int>() > 0) return kExitBadInput;
  return kExitPass;
}

json synthesized_record(const SweepCase& c, const std::string& disposition,
                        const std::string& message) {
  // A case of the report written by the json writer, from what was asked: one definition of
  // the record format (src/report/json_writer.hpp).
  CaseResult r;
  r.problem.shape = c.shape;
  r.problem.dist = parse_dist(c.dist).value_or(Dist::GpuMode);  // the config checked the name
  r.problem.seed = c.seed;
  try {
    r.bytes = TensorBytes::of(c.shape);
  } catch (const Error&) {  // a shape whose sizes overflow: no byte counts
  }
  // Not resolved (the case failed before it said which kernel runs): name is what was asked;
  // compare pairs it with the base's case of the same problem and "asked".
  r.kernel = r.kernel_asked = c.kernel;
  r.reference = c.reference;
  r.disposition = Disposition::Error;
  for (Disposition d : {Disposition::Passed, Disposition::Incorrect, Disposition::NotSupported})
    if (disposition == disposition_name(d)) r.disposition = d;
  r.message = message;
  r.tolerance.rtol = c.rtol.value_or(r.tolerance.rtol);
  r.tolerance.atol = c.atol.value_or(r.tolerance.atol);
  return to_json(r, false);
}

std::string error_line_of_log(const std::string& log_text) {
  std::stringstream ss(log_text);
  std::string line, last, tagged;
  while (std::getline(ss, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    if (line.rfind("nvfp4bench: ", 0) == 0) tagged = line.substr(12);
  }
  std::string out = tagged.empty() ? last : tagged;
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

}  // namespace nvfp4::sweep
