#include "tools/sweep_runner.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/heap_reuse.h"
#include "devices/device_catalog.h"
#include "engine/model_bytes.h"
#include "reports/results_db.h"
#include "tools/decoded_traces.h"
#include "tools/run_store.h"
#include "tools/shared_classification.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

// Shared state of the workers; every field is guarded by `mu` except `next` and
// the shared traces, profiles and classifications (each locks itself).
class SweepState {
 public:
  SweepState(const std::vector<SweepJob>& jobs, const SweepOptions& options)
      : jobs_(jobs),
        options_(options),
        start_(std::chrono::steady_clock::now()),
        traces_(jobs, options.max_decoded_bytes),
        shared_(options.share_classification ? jobs : std::vector<SweepJob>{}) {
    outcome_.total = static_cast<int64_t>(jobs.size());
  }

  // Worker loop: claims jobs until none is left or the database fails.
  absl::Status Work() {
    absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(options_.db);
    if (!db.ok()) return db.status();
    for (size_t i = next_++; i < jobs_.size(); i = next_++) {
      if (absl::Status s = RunOne(**db, i); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  SweepOutcome outcome() {
    std::lock_guard<std::mutex> lock(mu_);
    SweepOutcome out = outcome_;
    out.shared = shared_.replayed();
    return out;
  }

 private:
  // Only database errors stop the sweep; a job's own error is recorded.
  absl::Status RunOne(ResultsDb& db, size_t index) {
    const SweepJob& job = jobs_[index];
    const absl::Cleanup release = [this, index] { traces_.Release(index); };
    std::optional<SharedClassifications::Use> use;
    if (options_.share_classification) use.emplace(&shared_, index);
    absl::StatusOr<SimulationConfig> config = ResolveJob(job);
    if (!config.ok()) return Finish(job, config.status(), false);
    const RunConfig key = MakeRunConfig(*config);
    if (!Claim(key.Key())) return Duplicate();
    absl::StatusOr<bool> stored = db.Has(key.Key(), "simulated");
    if (!stored.ok()) return stored.status();
    if (*stored) return Finish(job, absl::OkStatus(), true);
    absl::StatusOr<std::shared_ptr<const TokenTrace>> trace = traces_.Get(index, *config);
    if (!trace.ok()) return Finish(job, trace.status(), false);
    config->decoded = *std::move(trace);
    config->profiles = &profiles_;
    if (use) config->sharing = use->Start();
    absl::StatusOr<SimulationResult> r = Simulate(*config);
    if (!r.ok()) return Finish(job, r.status(), false);
    if (use && !use->Succeeded()) {
      return Finish(job,
                    absl::InternalError("the run replayed another run's classification of its "
                                        "neurons and it did not match; nothing was stored (run "
                                        "the sweep again with --no-share)"),
                    false);
    }
    const RunSummary s = Summarize(r->record);
    absl::StatusOr<int64_t> id = db.Insert(MakeRunRow(
        key, "simulated", RunFigures(*config, s, r->memory, r->options, ExtrasOf(*r)), r->record));
    // Another process running the same sweep may have stored it meanwhile: then
    // this run counts as already stored, not as one more run.
    if (!id.ok() && !absl::IsAlreadyExists(id.status())) return id.status();
    return Finish(job, absl::OkStatus(), /*skipped=*/!id.ok());
  }

  // False when an earlier job of this sweep already has the configuration `key`.
  bool Claim(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return claimed_.insert(key).second;
  }

  absl::Status Duplicate() {
    std::lock_guard<std::mutex> lock(mu_);
    ++outcome_.duplicates;
    return Done();
  }

  absl::Status Finish(const SweepJob& job, const absl::Status& status, bool skipped) {
    std::lock_guard<std::mutex> lock(mu_);
    if (skipped) {
      ++outcome_.skipped;
    } else if (absl::IsResourceExhausted(status)) {
      ++outcome_.infeasible;
      outcome_.infeasible_labels.push_back(job.Label());
    } else if (!status.ok()) {
      outcome_.failures.push_back(absl::StrCat(job.Label(), ": ", status.message()));
    } else {
      ++outcome_.ran;
    }
    return Done();
  }

  // Counts one more job done and reports progress; mu_ is held.
  absl::Status Done() {
    ++done_;
    if (options_.progress) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      options_.progress({.done = done_, .total = outcome_.total, .elapsed_s = elapsed});
    }
    return absl::OkStatus();
  }

  const std::vector<SweepJob>& jobs_;
  const SweepOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<size_t> next_{0};
  DecodedTraces traces_;
  ProfileCache profiles_;
  SharedClassifications shared_;
  std::mutex mu_;
  std::set<std::string> claimed_;  // configuration keys of this sweep's jobs
  SweepOutcome outcome_;
  int64_t done_ = 0;
};

}  // namespace

absl::StatusOr<SimulationConfig> ResolveJob(const SweepJob& job) {
  SimulationConfig c;
  absl::StatusOr<DeviceProfile> device = LoadDevice(job.device);
  if (!device.ok()) return device.status();
  absl::StatusOr<ModelSpec> model = LoadModel(job.model);
  if (!model.ok()) return model.status();
  c.device = *std::move(device);
  c.model = *std::move(model);
  c.trace_path = job.trace_file;
  c.seed = job.seed;
  c.strategy = job.strategy;
  c.policy = job.policy;
  c.options = job.options;
  c.memory_bytes = job.memory_bytes;
  c.ffn_resident = job.ffn_resident;
  if (job.memory_fraction >= 0) {
    c.memory_bytes = static_cast<int64_t>(
        std::llround(job.memory_fraction * ComputeModelBytes(c.model).model_bytes()));
  }
  c.threads = job.threads;
  c.tokens = job.tokens;
  c.prompt_tokens = job.prompt_tokens;
  c.profile = job.profile;
  return c;
}

absl::StatusOr<SweepOutcome> RunSweep(const std::vector<SweepJob>& jobs,
                                      const SweepOptions& options) {
  // Create or migrate the database once, before the workers open it.
  if (absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(options.db); !db.ok()) {
    return db.status();
  }
  TuneHeapForSimulation(options.jobs);  // the runs reuse each other's per-neuron arrays
  SweepState state(jobs, options);
  const int workers = std::max(1, std::min<int>(options.jobs, static_cast<int>(jobs.size())));
  std::vector<absl::Status> status(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&state, &status, w] { status[w] = state.Work(); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return state.outcome();
}

}  // namespace sparseflash::cli
