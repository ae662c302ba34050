// sparseflash sweep: a grid of simulated configurations from a sweep file into a
// results database, in parallel, resumable, optionally one shard of N.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_format.h"
#include "tools/cli.h"
#include "tools/sweep_grid.h"
#include "tools/sweep_runner.h"

namespace sparseflash::cli {
namespace {

struct SweepArgs {
  std::string config, db, shard = "1/1";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool list = false;
  bool no_share = false;
};

int RunSweepCommand(const SweepArgs& a) {
  absl::StatusOr<SweepPlan> plan = LoadSweep(a.config);
  if (!plan.ok()) return ReportError(plan.status());
  absl::StatusOr<Shard> shard = ParseShard(a.shard);
  if (!shard.ok()) return ReportError(shard.status());
  const std::vector<SweepJob> jobs = SelectShard(plan->jobs, *shard);
  if (a.list) {
    for (const SweepJob& j : jobs) absl::PrintF("%s\n", j.Label());
    return 0;
  }
  std::fprintf(stderr, "sweep %s: %zu configurations%s, %d jobs, into %s\n",
               plan->name.empty() ? a.config.c_str() : plan->name.c_str(), jobs.size(),
               shard->count > 1
                   ? absl::StrFormat(" (shard %d of %d)", shard->index, shard->count).c_str()
                   : "",
               a.jobs, a.db.c_str());
  ProgressBar bar("sweep");
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SweepOutcome> out = RunSweep(
      jobs, {.db = a.db,
             .jobs = a.jobs,
             .share_classification = !a.no_share,
             .progress = [&bar](const SweepProgress& p) { bar(p.done, p.total, p.elapsed_s); }});
  if (!out.ok()) return ReportError(out.status());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  absl::PrintF("%lld ran, %lld already stored, %lld infeasible, %zu failed, in %s; results in %s\n",
               static_cast<long long>(out->ran), static_cast<long long>(out->skipped),
               static_cast<long long>(out->infeasible), out->failures.size(),
               FormatDuration(seconds), a.db);
  if (out->duplicates > 0) {
    absl::PrintF("%lld jobs resolved to a configuration another job already has and ran once\n",
                 static_cast<long long>(out->duplicates));
  }
  if (out->shared > 0) {
    absl::PrintF(
        "%lld runs differed from another only in threads or I/O scheduling options "
        "and replayed its classification of the neurons (--no-share classifies in every run)\n",
        static_cast<long long>(out->shared));
  }
  if (out->infeasible > 0) {
    absl::PrintF("infeasible (memory budget below the strategy's resident set), e.g. %s\n",
                 out->infeasible_labels.front());
  }
  for (const std::string& f : out->failures) std::fprintf(stderr, "failed: %s\n", f.c_str());
  return out->failures.empty() ? 0 : 1;
}

}  // namespace

void AddSweepCommand(CLI::App& app, Dispatch& dispatch) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* s = app.add_subcommand(
      "sweep", "Simulate every configuration of a sweep file into a results database (resumable)");
  s->add_option("--config", a->config, "Sweep file (text protobuf; see sweeps/*.textproto)")
      ->required();
  s->add_option("--db", a->db,
                "Results database (SQLite); configurations in it are skipped (not needed "
                "with --list)");
  s->add_option("--jobs", a->jobs, "Simulations in parallel")
      ->capture_default_str()
      ->check(InRange(1, kMaxJobs));
  s->add_option("--shard", a->shard,
                "Run shard K of N (every N-th configuration from the K-th), e.g. "
                "$SLURM_ARRAY_TASK_ID/8; merge the shards with 'db merge'")
      ->capture_default_str();
  s->add_flag("--list", a->list, "Print the configurations (of this shard) and exit");
  s->add_flag("--no-share", a->no_share,
              "Classify every run's neurons itself, instead of replaying the classification "
              "of a run that differs only in threads, pipeline, cluster_neurons, io_depth or "
              "io_threads "
              "(the results are the same; for checking that)");
  s->callback([&dispatch, a] {
    dispatch.action = [a] {
      if (!a->list && a->db.empty()) {
        return ReportError(absl::InvalidArgumentError("sweep needs --db FILE (or --list)"));
      }
      return RunSweepCommand(*a);
    };
  });
}

}  // namespace sparseflash::cli
