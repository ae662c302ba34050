// One replay: a configuration run by the real engine on this machine and by the
// simulator with the given device profile, and the pair stored in a results
// database (the measurement linked to its prediction). Shared by `replay` and
// `demo`.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "engine/real/real_run.h"
#include "engine/real/storage_warmup.h"
#include "engine/run_summary.h"
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
};

// Runs `config` for real (reading `real_options.weights_path`), the whole
// process within its --memory budget, and simulated with the same plan. With
// `read_weights_first`, the weight file is first read once in order
// (ReadFileOnce), as `device calibrate` reads the file it measures: storage that
// caches what was read (a virtual disk) then serves the run as it served the
// calibration. `say` (may be empty) hears of that read as it starts and about
// every GiB of it, after the run's checks have passed.
absl::StatusOr<ReplayResult> ReplayOnce(const SimulationConfig& config,
                                        const RealRunOptions& real_options,
                                        bool read_weights_first = true,
                                        const std::function<void(const std::string&)>& say = {});

// Stores the prediction (unless this configuration's is already stored) and the
// measurement linked to it, in one transaction; returns the measurement's id.
absl::StatusOr<int64_t> StoreReplay(const std::string& db_path, const SimulationConfig& config,
                                    const ReplayResult& replay);

}  // namespace sparseflash::cli
