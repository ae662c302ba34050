// One replay: a configuration run by the real engine on this machine and by the
// simulator with the given device profile, and the pair stored in a results
// database (the measurement linked to its prediction). Shared by `replay` and
// `demo`.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/real/compute_now.h"
#include "engine/real/real_run.h"
#include "engine/real/storage_now.h"
#include "engine/real/storage_warmup.h"
#include "engine/run_summary.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"

namespace sparseflash::cli {

struct ReplayResult {
  RealRunResult real;
  SimulationResult predicted;
  RunSummary measured_summary, predicted_summary;
  std::map<std::string, std::string> options;  // as the real run resolved them
  double error = 0;                            // predicted / measured - 1 of decode tokens/s
  // Of a --memory budget, what the process itself holds (PrepareRealRun); the
  // strategy, real and predicted, plans with the rest.
  int64_t process_bytes = 0;
  // llamacpp with mmap (its default): the kernel read the weights (page faults), so the
  // measured flash bytes are its count and hits and I/O stalls are not seen.
  bool page_faults = false;
  // The weight file's one read before the run (bytes 0: not read).
  StorageWarmup weights_read_first;
  // With ReplayOptions::recheck_compute: this machine's compute rates just before
  // and just after the run against the profile's (AroundRun); with
  // recheck_storage its storage's (StorageAroundRun); and the prediction priced
  // at whichever was measured.
  std::optional<ComputeNow> compute_now;
  std::optional<StorageNow> storage_now;
  RunSummary predicted_now_summary;
  double error_now = 0;  // predicted_now / measured - 1 of decode tokens/s
  bool rechecked() const { return compute_now || storage_now; }
};

struct ReplayOptions {
  // Read the weight file once in order before the run (ReadFileOnce), as
  // `device calibrate` reads the file it measures: storage that caches what was
  // read (a virtual disk) then serves the run as it served the calibration.
  bool read_weights_first = true;
  // Measure the compute rates again just before and after the run
  // (MeasureComputeNow) and predict also at them, which takes the machine's
  // drift since calibration out of the prediction's error.
  bool recheck_compute = false;
  // Measure the storage again just before and after the run (MeasureStorageNow,
  // on the weight file; the mapped read-ahead too where the run maps it) and
  // predict also at it, which takes the disk's drift out of the error.
  bool recheck_storage = false;
  // Hears of the weight read as it starts and about every GiB of it, after the
  // run's checks have passed, and of the compute check (may be empty).
  std::function<void(const std::string&)> say;
};

// Runs `config` for real (reading `real_options.weights_path`), the whole
// process within its --memory budget, and simulated with the same plan.
absl::StatusOr<ReplayResult> ReplayOnce(const SimulationConfig& config,
                                        const RealRunOptions& real_options,
                                        const ReplayOptions& options = {});

// A replay's compute check (ReplayOptions::recheck_compute) as JSON: the
// ratios, their summary and the prediction at the rates now; null without one.
// What `replay --json` prints and the measured run's figures keep.
nlohmann::ordered_json ComputeNowJson(const ReplayResult& replay);
// The same of its storage check (ReplayOptions::recheck_storage).
nlohmann::ordered_json StorageNowJson(const ReplayResult& replay);

// Stores the prediction (unless this configuration's is already stored) and the
// measurement linked to it, in one transaction; returns the measurement's id.
absl::StatusOr<int64_t> StoreReplay(const std::string& db_path, const SimulationConfig& config,
                                    const ReplayResult& replay);

}  // namespace sparseflash::cli
