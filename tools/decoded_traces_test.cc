#include "tools/decoded_traces.h"

#include <map>

#include "gtest/gtest.h"
#include "reports/results_db.h"
#include "reports/test_db_path.h"
#include "reports/test_stored_runs.h"
#include "tools/sweep_runner.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

SweepJob Job(uint64_t seed) {
  SweepJob j;
  j.model = "tinystories-relu-260k";
  j.seed = seed;
  j.tokens = 4;
  return j;
}

SimulationConfig Config(const SweepJob& job) {
  SimulationConfig c;
  absl::StatusOr<ModelSpec> model = LoadModel(job.model);
  EXPECT_TRUE(model.ok()) << model.status();
  if (model.ok()) c.model = *model;
  c.seed = job.seed;
  c.tokens = job.tokens;
  return c;
}

// The jobs of a trace share it until the last of them is done.
TEST(DecodedTraces, SharesATraceUntilItsLastJob) {
  const std::vector<SweepJob> jobs = {Job(1), Job(1), Job(2)};
  DecodedTraces traces(jobs);
  auto first = traces.Get(0, Config(jobs[0]));
  auto second = traces.Get(1, Config(jobs[1]));
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_NE(*first, nullptr);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(traces.kept_bytes(), (*first)->bytes);
  traces.Release(0);
  EXPECT_EQ(traces.kept_bytes(), (*first)->bytes);
  traces.Release(1);
  EXPECT_EQ(traces.kept_bytes(), 0);
  auto other = traces.Get(2, Config(jobs[2]));
  ASSERT_TRUE(other.ok());
  ASSERT_NE(*other, nullptr);
  EXPECT_NE(*other, *first);
}

// A trace over the budget is not kept: its runs read it themselves.
TEST(DecodedTraces, KeepsNoTraceOverTheBudget) {
  const std::vector<SweepJob> jobs = {Job(1), Job(1)};
  DecodedTraces traces(jobs, /*max_bytes=*/1);
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto trace = traces.Get(i, Config(jobs[i]));
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(*trace, nullptr);
  }
  EXPECT_EQ(traces.kept_bytes(), 0);
}

// Runs that read a trace over the budget themselves store what runs sharing
// it decoded store.
TEST(DecodedTraces, RunsOverTheBudgetStoreWhatSharingRunsStore) {
  std::vector<SweepJob> jobs;
  for (const char* strategy : {"powerinfer2", "llmflash"}) {
    for (const char* policy : {"", "s3fifo"}) {
      SweepJob j = Job(3);
      j.tokens = 8;
      j.device = "oneplus12";
      j.strategy = strategy;
      j.policy = policy;
      j.ffn_resident = 0.5;
      jobs.push_back(j);
    }
  }
  jobs.push_back(jobs.front());
  jobs.back().policy = "belady";
  auto stored = [&](int64_t max_bytes) {
    const std::string db = FreshDbPath("decoded_" + std::to_string(max_bytes) + ".db");
    absl::StatusOr<SweepOutcome> out =
        RunSweep(jobs, {.db = db, .jobs = 2, .max_decoded_bytes = max_bytes});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) {
      EXPECT_TRUE(out->failures.empty()) << out->failures.front();
    }
    std::map<std::string, std::string> figures;
    for (const auto& [key, row] : StoredRunsByKey(db)) figures[key] = row.figures_json;
    return figures;
  };
  const auto shared = stored(DecodedTraces::kDefaultMaxBytes);
  EXPECT_EQ(shared.size(), jobs.size());
  EXPECT_EQ(shared, stored(1));
}

}  // namespace
}  // namespace sparseflash::cli
