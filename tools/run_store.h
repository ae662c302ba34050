// Turns a run's configuration and figures into a results-database row and stores
// it (simulate --db, replay --db).
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "reports/results_db.h"
#include "sim/simulator.h"

namespace sparseflash::cli {

RunRow MakeRunRow(const SimulationConfig& config, const std::map<std::string, std::string>& options,
                  const nlohmann::ordered_json& figures, const std::string& mode);

// Inserts `row` into the database at `path`; returns its id.
absl::StatusOr<int64_t> StoreRun(const std::string& path, const RunRow& row);

}  // namespace sparseflash::cli
