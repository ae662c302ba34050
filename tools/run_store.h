// Turns a run's configuration and figures into a results-database row and stores
// it (simulate --db, replay --db, sweep). A run's key covers what the user asked
// for (device profile and trace by content hash, the options as given); the
// options as resolved by the strategy are part of its figures.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "engine/run_summary.h"
#include "nlohmann/json.hpp"
#include "reports/results_db.h"
#include "sim/simulator.h"

namespace sparseflash::cli {

// The configuration columns of a run; hashes the device profile and the trace
// file (each file once per process).
RunConfig MakeRunConfig(const SimulationConfig& config);

// Figures only a simulation has.
struct SimulatedExtras {
  bool over_app_limit = false;
  double energy_j_per_token = 0;
};
SimulatedExtras ExtrasOf(const SimulationResult& r);

// The figures object of a run: `Summarize` plus the memory split, the
// strategy's resolved options and what only a simulation has. What `simulate
// --json` prints.
nlohmann::ordered_json RunFigures(const SimulationConfig& config, const RunSummary& summary,
                                  const MemoryPlan& memory,
                                  const std::map<std::string, std::string>& options,
                                  const SimulatedExtras& extras = {});

RunRow MakeRunRow(const RunConfig& config, const std::string& mode,
                  const nlohmann::ordered_json& figures, const RunRecord& record);

// Inserts `row` into the database at `path`; returns its id.
absl::StatusOr<int64_t> StoreRun(const std::string& path, const RunRow& row);

}  // namespace sparseflash::cli
