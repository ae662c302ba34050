// What the report shows, computed from a results database only: the runs with
// their figures parsed, grouped by device and model into studies, and the
// derived tables (tokens/s by budget per strategy, speedups, hit rate by cache
// size per policy, the chosen budget's time split and latency CDF, predicted
// against measured). The HTML, Markdown and CSV writers only format these.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/results_db.h"

namespace sparseflash {

struct ReportRun {
  int64_t id = 0, linked_run = 0;
  std::string mode, device, model, trace, strategy, policy, options, origin;
  std::string policy_used;  // the policy the strategy ran with (its default when policy is "")
  int threads = 0;          // as configured; 0 = the strategy's default
  int threads_used = 0;     // as run (from the figures' options)
  uint64_t tokens = 0;
  int prompt_tokens = 0;
  int64_t memory_bytes = 0;  // the budget: as configured, else resident + cache
  int64_t cache_bytes = 0;
  double tokens_per_s = 0, ttft_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double hit_rate = 0, flash_bytes_per_token = 0, io_stall_share = 0;
  std::vector<std::pair<std::string, double>> breakdown_ms;  // mean token, in engine order
  std::vector<double> latency_ms;
  // A replay's measurement checked the compute rates around it (replay
  // --recheck-compute): the prediction at those rates; 0 = not checked.
  double predicted_now_tokens_per_s = 0;

  // The strategy plus whatever differs from its defaults ("powerinfer2/s3fifo").
  std::string Variant() const;
  bool plain() const { return Variant() == strategy; }
};

// A point of a strategy's curve.
struct BudgetPoint {
  int64_t memory_bytes = 0;
  const ReportRun* run = nullptr;
};

struct Speedup {
  int64_t memory_bytes = 0;
  std::string strategy, baseline;
  double factor = 0;
};

// Cache policies run by one strategy at one budget.
struct PolicyComparison {
  std::string strategy;
  int64_t memory_bytes = 0;
  std::map<std::string, const ReportRun*> runs;  // by the policy used
};

// One device x model.
struct Study {
  std::string device, model;
  // Default-configured simulated runs per strategy, by budget (ascending).
  std::map<std::string, std::vector<BudgetPoint>> curves;
  std::vector<Speedup> speedups;  // over llamacpp and over llmflash at equal budgets
  // Per strategy whose policies were compared: each policy's runs by cache size.
  std::map<std::string, std::map<std::string, std::vector<const ReportRun*>>> policies;
  // Every budget at which a strategy ran two policies or more.
  std::vector<PolicyComparison> policy_comparisons;
  // The budget where the most strategies ran (the middle one of those), with
  // each strategy's run there: for the time split and the latency CDF.
  int64_t chosen_budget = 0;
  std::vector<const ReportRun*> at_chosen;
  // The fastest offloading strategy per budget, for the headline.
  std::vector<std::pair<int64_t, const ReportRun*>> fastest;
  // Published figures for this device and model (stored `validate` results),
  // each "source: metric published, simulated here S (error)".
  std::vector<std::string> published;
};

struct Replay {
  const ReportRun* measured = nullptr;
  const ReportRun* predicted = nullptr;
  double error = 0;  // predicted / measured - 1 of decode tokens/s
};

struct ReportData {
  std::string db_path;
  std::vector<ReportRun> runs;  // every run, in id order
  std::vector<Study> studies;
  std::vector<Replay> replays;
  std::vector<ValidationRow> validation;  // `sparseflash validate` results stored here
};

// Gives each study the validation results whose simulated run has its device
// and model (Study::published).
void AttachPublished(ReportData* data);

// Reads the database at `path` (read only) and derives the report's tables;
// errors name the file and the run whose figures do not parse.
absl::StatusOr<ReportData> LoadReportData(const std::string& path);
ReportData BuildReportData(std::vector<RunRow> rows, const std::string& db_path);

// The headline of a study in one or two sentences: which strategy is fastest at
// which budgets, by how much, and (with `why`) what each reads and waits for.
std::string StudyHeadline(const Study& study, bool why = true);

// A unit of bytes for a column, axis or figure: the largest of GB, MB, kB and
// B in which `largest` (the column's largest value) is at least 1, so a 7B
// model's budgets read in GB and a 15M-parameter model's in MB, not "0.00 GB".
struct ByteUnit {
  const char* name = "GB";
  double bytes = 1e9;
};
ByteUnit ByteUnitFor(double largest);

std::string FormatMemory(int64_t bytes);     // "2.26 GB", "219.36 kB": two decimals
std::string FormatBytesShort(double bytes);  // "4.44 GB", "38 MB", "12 kB"

}  // namespace sparseflash
