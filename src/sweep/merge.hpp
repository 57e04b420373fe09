// Joining shard reports of one sweep (`nvfp4bench merge`): same config hash, same shard count,
// no case twice; cases in case order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nvfp4::sweep {

// inputs: (path, parsed report). Throws usage_error naming the path when reports do not belong
// together. The result's sweep.complete says whether every case of the config is present.
nlohmann::json merge_reports(const std::vector<std::pair<std::string, nlohmann::json>>& inputs);

}  // namespace nvfp4::sweep
