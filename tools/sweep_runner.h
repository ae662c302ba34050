// Runs a sweep's jobs through the simulator into a results database: `jobs`
// worker threads, each run stored in its own transaction as soon as it ends,
// and configurations already stored skipped, so a sweep killed at any moment
// finishes when the same command runs again. A budget below a strategy's
// resident set is counted as infeasible, not as a failure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/simulator.h"
#include "tools/decoded_traces.h"
#include "tools/sweep_grid.h"

namespace sparseflash::cli {

struct SweepProgress {
  int64_t done = 0, total = 0;  // done counts skipped, infeasible and failed jobs too
  double elapsed_s = 0;
};

struct SweepOptions {
  std::string db;
  int jobs = 1;
  // Runs that differ only in scheduling replay one run's classification of its
  // neurons (tools/shared_classification.h); the results are the same without.
  bool share_classification = true;
  // Memory the runs' shared decoded traces may take (tools/decoded_traces.h).
  int64_t max_decoded_bytes = DecodedTraces::kDefaultMaxBytes;
  std::function<void(const SweepProgress&)> progress;  // called from one thread at a time
};

struct SweepOutcome {
  int64_t total = 0, skipped = 0, ran = 0, infeasible = 0;
  // Jobs that resolve to the same configuration as an earlier job of this sweep
  // (e.g. a policy row naming the strategy's default policy): run once, counted here.
  int64_t duplicates = 0;
  // Runs that replayed another run's classification instead of classifying.
  int64_t shared = 0;
  std::vector<std::string> failures;  // "label: error"
  std::vector<std::string> infeasible_labels;
};

// Resolves a job into a simulation (catalog names loaded, fractions of the model
// turned into bytes).
absl::StatusOr<SimulationConfig> ResolveJob(const SweepJob& job);

absl::StatusOr<SweepOutcome> RunSweep(const std::vector<SweepJob>& jobs,
                                      const SweepOptions& options);

}  // namespace sparseflash::cli
