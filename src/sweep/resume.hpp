// A sweep's JSONL header (which config and shard its records belong to) and --resume: the
// records of an earlier, interrupted run of the same config taken back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/sweep/config.hpp"
#include "src/sweep/worker.hpp"

namespace nvfp4::sweep {

// The JSONL's first line: which config (and shard) its records belong to.
nlohmann::json jsonl_header(const SweepConfig& cfg, const Shard& shard);

// --resume: checks that the JSONL was written for this config and shard, drops a torn last
// line, takes its records into run.records and their cases out of run.todo; returns how many.
int64_t resume_from(const std::string& jsonl_path, const nlohmann::json& header,
                    const SweepConfig& cfg, const Shard& shard, SweepRun& run);

}  // namespace nvfp4::sweep
