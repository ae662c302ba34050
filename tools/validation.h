// Validation against published results: the catalog in validation/*.textproto
// (built in; users may add files of their own), each entry run through the
// simulator (or, for trace statistics, the generator) and compared with its
// published value. Entries run in parallel; results come back in catalog order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "reports/results_db.h"
#include "sim/simulator.h"

namespace sparseflash::cli {

enum class ValidationMetric {
  kDecodeTokensPerS,
  kIoMsPerToken,
  kHitRate,
  kMissRateMean,
  kMissRateP99,
  kIoShare,
  kComputeShare,
  kPrefillTokensPerS,
  kDramGbPerS,
  kEnergyJPerToken,
  kCpuUtilization,
  kTraceNewPerToken,
  kTraceWindowShare,
};
const char* MetricName(ValidationMetric metric);

struct ValidationCase {
  std::string id, group, source, tag, note, file;
  std::string known_miss;  // why the simulation is outside the tolerance; empty: it agrees
  ValidationMetric metric = ValidationMetric::kDecodeTokensPerS;
  double published = 0;
  double tolerance = 0.25;
  int window = 0;                     // trace metrics
  bool trace_only = false;            // no device or strategy: a statistic of the model's trace
  SimulationConfig config;            // device, model, strategy, options, budget, tokens
  std::string device_ref, model_ref;  // the entry's device and model as written (name or file)
};

// The built-in catalog, then `extra_files` (entries of the user's own).
// Errors name the file and the entry.
absl::StatusOr<std::vector<ValidationCase>> LoadValidationCatalog(
    const std::vector<std::string>& extra_files);

struct ValidationResult {
  const ValidationCase* entry = nullptr;
  absl::Status status;  // why it could not be simulated
  double simulated = 0;
  double error = 0;     // simulated / published - 1
  std::string detail;   // the quantities behind the figure
  RunRow run;           // the simulated run (empty for trace metrics)
  bool within() const;  // |error| <= the entry's tolerance
  // What the tables say of a result outside its tolerance (or of a known miss
  // that agrees now); empty for a result that agrees as expected.
  std::string Explanation() const;
};

struct ValidationOptions {
  int jobs = 1;
  std::function<void(int done, int total)> progress;
};

std::vector<ValidationResult> RunValidation(const std::vector<ValidationCase>& cases,
                                            const ValidationOptions& options);

// The catalog's simulated entries that a run of `c` repeats: the same device
// profile, model, generated trace, strategy, budget, prompt and options as
// resolved (the decode tokens and the seed may differ). Each comes back with
// `r`'s figure for the entry's metric and its error against the published
// value, so a user's run shows the paper's figure beside its own. Empty for a
// run of a trace file. The results point into `catalog`.
std::vector<ValidationResult> PublishedForRun(const std::vector<ValidationCase>& catalog,
                                              const SimulationConfig& c, const SimulationResult& r);

// The `sparseflash simulate` command line that runs a simulated entry's
// configuration (its budget in bytes, as the entry resolves it); a run of it
// prints the entry's published figure beside its own. Empty for a trace
// statistic.
std::string SimulateCommand(const ValidationCase& v);

// The ids of the catalog's entries on `c`'s device, model and strategy (at any
// budget or options): where to look when a run repeats none of them.
std::vector<std::string> EntriesNear(const std::vector<ValidationCase>& catalog,
                                     const SimulationConfig& c);

// Stores each result (and its simulated run, unless that configuration is
// stored already) in the results database at `db_path`, in one transaction.
absl::Status StoreValidation(const std::string& db_path,
                             const std::vector<ValidationResult>& results);

// Median and largest absolute error over `results` that ran.
struct ErrorSummary {
  int entries = 0, within = 0;
  double median = 0, max = 0;
};
ErrorSummary Summarize(const std::vector<const ValidationResult*>& results);

// One result as `validate --json` prints it (and `simulate --json` under
// `published`): the entry, its published and simulated values, the error, and
// why it misses or why it failed.
nlohmann::ordered_json ValidationResultJson(const ValidationResult& r);

// A metric's value as the tables show it ("12.3 %" for shares, else 4 digits).
std::string FormatMetricValue(ValidationMetric metric, double value);

// The results as Markdown: one row per entry (source, metric, published,
// simulated, error, within), then median and largest |error| per group and
// overall, then each entry outside its tolerance with its known_miss.
// docs/dev-targets.md holds this text as `validate --markdown` prints it.
std::string ValidationMarkdown(const std::vector<ValidationResult>& results);

}  // namespace sparseflash::cli
