#include "src/sweep/record_check.hpp"

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/report/compare.hpp"

namespace nvfp4::sweep {

using nlohmann::json;
using vt = json::value_t;

namespace {

std::string sub(const std::string& where, const char* key) {
  return where + (!where.empty() && where.back() == ' ' ? "" : ".") + key;
}

}  // namespace

void check_case_shape(const json& c, const std::string& where) {
  if (!c.is_object()) throw usage_error(fmt::format("{}: not an object; expected a case", where));
  const json& p = json_need(c, "problem", vt::object, where);
  const std::string pw = sub(where, "problem");
  for (const char* k : {"m", "n", "k", "l", "seed"}) (void)json_need(p, k, vt::number_integer, pw);
  (void)json_need(p, "dist", vt::string, pw);
  (void)json_need(json_need(c, "kernel", vt::object, where), "name", vt::string, sub(where, "kernel"));
  (void)json_need(json_need(c, "reference", vt::object, where), "name", vt::string,
                  sub(where, "reference"));
  const std::string d = json_need(c, "disposition", vt::string, where).get<std::string>();
  if (d != "passed" && d != "incorrect" && d != "not_supported" && d != "error")
    throw usage_error(fmt::format("{}: '{}': unknown; expected passed, incorrect, not_supported or "
                                  "error", sub(where, "disposition"), d));
  (void)json_need(c, "message", vt::string, where);
  if (d != "passed") return;
  // A passed case is a claim about the kernel's result and time: both must be there.
  const json& kt = json_need(c, "kernel_timing", vt::object, where);
  if (!json_need(kt, "ran", vt::boolean, sub(where, "kernel_timing")).get<bool>())
    throw usage_error(fmt::format("{}: false; a passed case has a kernel timing that ran",
                                  sub(sub(where, "kernel_timing"), "ran")));
  const json& v = json_need(c, "verification", vt::object, where);
  if (!json_need(v, "passed", vt::boolean, sub(where, "verification")).get<bool>())
    throw usage_error(fmt::format("{}: false; a passed case has a verification that passed",
                                  sub(sub(where, "verification"), "passed")));
}

void check_case_matches_params(const json& c, const std::string& where) {
  // Required by the schema, which the commands check first.
  const auto sw = c.find("sweep");
  if (sw == c.end() || !sw->is_object() || !sw->contains("params")) return;
  const std::string sweep_where = sub(where, "sweep");  // named: a reference into *sw outlives it
  const json& params = json_need(*sw, "params", vt::object, sweep_where);
  const json& p = c.at("problem");
  for (const char* key : {"m", "n", "k", "l", "dist", "seed"}) {
    const auto want = params.find(key);
    if (want != params.end() && p.at(key) != *want)
      throw usage_error(fmt::format("{}: {}; its config case (sweep.params) has {}",
                                    sub(sub(where, "problem"), key), p.at(key).dump(), want->dump()));
  }
}

void check_record_claims(const json& rec, const SweepCase& c, const std::string& where) {
  const json& s = json_need(rec, "sweep", vt::object, where);
  if (json_need(s, "params", vt::object, sub(where, "sweep")) != c.params())
    throw usage_error(fmt::format("{}: not the parameters of case {} of this config ({}); the "
                                  "record belongs to another case", sub(sub(where, "sweep"), "params"),
                                  c.index, c.label()));
  const json& p = rec["problem"];
  const std::string pw = sub(where, "problem");
  const auto same = [&](const char* key, const json& want) {
    if (p.at(key) != want)
      throw usage_error(fmt::format("{}: {}; case {} of this config has {}", sub(pw, key),
                                    p.at(key).dump(), c.index, want.dump()));
  };
  same("m", c.shape.m);
  same("n", c.shape.n);
  same("k", c.shape.k);
  same("l", c.shape.l);
  same("dist", c.dist);
  same("seed", c.seed);
}

}  // namespace nvfp4::sweep
