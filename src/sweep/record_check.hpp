// What a sweep reads back - JSONL records (--resume) and the cases of shard reports (merge) -
// checked before it is trusted: the shape of a report case (schemas/report.schema.json) and,
// for a record, that it is the case it claims to be. A damaged file is bad input (exit 2) with
// one line naming the file, the line or case, and the key.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "src/sweep/config.hpp"

namespace nvfp4::sweep {

// The keys every reader of a case uses, with their types: problem (m, n, k, l, dist, seed),
// kernel.name, reference.name, disposition (one of the four), message; a passed case also has a
// kernel_timing that ran and a verification that passed. `where` is "FILE line 3: " or
// "FILE: cases[2]"; throws usage_error "WHERE.key: what is wrong".
void check_case_shape(const nlohmann::json& c, const std::string& where);

// A shard's case is the case its sweep.params describe: its problem's shape, dist and seed are
// the params' (merge has no config to hold it against; the params are the config's case).
void check_case_matches_params(const nlohmann::json& c, const std::string& where);

// The record is case `c` of the config: its sweep.params and problem are c's.
void check_record_claims(const nlohmann::json& rec, const SweepCase& c, const std::string& where);

}  // namespace nvfp4::sweep
