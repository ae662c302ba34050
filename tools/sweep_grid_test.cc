#include "tools/sweep_grid.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tools/sweep_runner.h"

namespace sparseflash::cli {
namespace {

constexpr char kTwoGrids[] = R"pb(
  name: "t"
  tokens: 16
  grid {
    name: "budgets"
    device: [ "oneplus12", "oneplus-ace2" ]
    model: [ "turbosparse-mistral-7b" ]
    strategy: [ "powerinfer2", "llamacpp" ]
    memory_fraction: [ 0.5, 0.75 ]
    memory: [ "8GiB" ]
  }
  grid {
    name: "policies"
    device: [ "oneplus12" ]
    model: [ "turbosparse-mistral-7b" ]
    strategy: [ "powerinfer2" ]
    policy: [ "lru", "belady" ]
    ffn_resident: [ 0.3 ]
    trace { file: "traces/x.trace" }
    option: [ "pipeline=none" ]
  }
)pb";

TEST(SweepGrid, ExpandsTheProductOfEachGrid) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(kTwoGrids, "t.textproto", "/data");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->name, "t");
  ASSERT_EQ(plan->jobs.size(), 2u * 2 * 3 + 2);
  const SweepJob& last = plan->jobs.back();
  EXPECT_EQ(last.policy, "belady");
  EXPECT_EQ(last.trace_file, "/data/traces/x.trace");
  EXPECT_EQ(last.options, std::vector<std::string>{"pipeline=none"});
  EXPECT_EQ(last.tokens, 16u);
  EXPECT_EQ(plan->jobs.front().memory_bytes, int64_t{8} << 30);  // bytes, then fractions
  EXPECT_DOUBLE_EQ(plan->jobs[1].memory_fraction, 0.5);
}

// The shipped sweep files expand to what their comments say, every job distinct
// (the 10,000-configuration file is the simulator's speed benchmark).
TEST(SweepGrid, ShippedSweepFilesExpandAsTheySay) {
  for (const auto& [file, jobs] : std::vector<std::pair<std::string, size_t>>{
           {"sweeps/mistral-10k.textproto", 10000}, {"sweeps/mistral-500.textproto", 500}}) {
    std::ifstream in(file);
    ASSERT_TRUE(in.good()) << file << " is missing (run the tests from the repository root)";
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<SweepPlan> plan = ParseSweep(text.str(), file, "sweeps");
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->jobs.size(), jobs) << file;
  }
}

TEST(SweepGrid, AConfigurationInTwoGridsRunsOnce) {
  const std::string grid = R"pb(grid {
                                  device: "oneplus12"
                                  model: "bamboo-7b"
                                  strategy: "powerinfer2"
                                  ffn_resident: 0.5
                                })pb";
  absl::StatusOr<SweepPlan> plan = ParseSweep(grid + grid, "dup.textproto", "");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->jobs.size(), 1u);
}

TEST(SweepGrid, ErrorsNameTheFileGridAndField) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(
      R"pb(grid {
             name: "g"
             device: "oneplus12"
             model: "bamboo-7b"
             strategy: "powerinfer3"
             ffn_resident: 0.5
           })pb",
      "s.textproto", "");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("s.textproto: grid 1 (g).strategy"), std::string::npos)
      << plan.status();
  EXPECT_NE(plan.status().message().find("powerinfer2"), std::string::npos);

  plan = ParseSweep(R"pb(grid { device: "oneplus12" model: "bamboo-7b" strategy: "llamacpp" })pb",
                    "s.textproto", "");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("no memory budget"), std::string::npos);

  plan = ParseSweep(
      R"pb(grid { device: "pixel" model: "bamboo-7b" strategy: "llamacpp" memory: "4GiB" })pb",
      "s.textproto", "");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find(".device"), std::string::npos);

  plan = ParseSweep("grid { colour: 1 }", "s.textproto", "");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("s.textproto"), std::string::npos);
}

// A file whose lists multiply past the limit is refused before it is
// expanded (a fuzzed file of repeated lists took seconds to expand).
TEST(SweepGrid, RefusesAGridThatExpandsPastTheLimit) {
  std::string budgets = "memory_fraction: [ 0.3";
  for (int i = 1; i < 50; ++i) budgets += absl::StrFormat(", %.3f", 0.3 + 0.001 * i);
  budgets += " ]";
  std::string threads = "threads: [ 1";
  for (int i = 2; i <= 100; ++i) threads += absl::StrCat(", ", i);
  threads += " ]";
  const std::string grid = absl::StrCat(R"pb(grid { name: "big"
                                                    device: [ "oneplus12", "oneplus-ace2" ]
                                                    model: "bamboo-7b"
                                                    strategy: [ "powerinfer2", "llamacpp" ])pb",
                                        budgets, " ", threads, " }");
  // 2 x 2 x 50 x 100 = 20,000 configurations: under the limit.
  absl::StatusOr<SweepPlan> plan = ParseSweep(grid, "big.textproto", "");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->jobs.size(), 20'000u);
  // A caller's own smaller limit (the fuzzer's) refuses it, saying which.
  absl::StatusOr<SweepPlan> capped = ParseSweep(grid, "big.textproto", "", 1000);
  ASSERT_FALSE(capped.ok());
  EXPECT_NE(capped.status().message().find("past 1000 configurations"), std::string::npos)
      << capped.status();
  // Six such grids (none a duplicate of another) go past it at the sixth.
  std::string six;
  for (int i = 0; i < 6; ++i) {
    six += absl::StrReplaceAll(grid, {{"bamboo-7b", i % 2 ? "bamboo-7b" : "turbosparse-mistral-7b"},
                                      {"threads: [ 1", absl::StrCat("threads: [ ", 200 + i)}});
  }
  plan = ParseSweep(six, "big.textproto", "");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("big.textproto: grid 6 (big)"), std::string::npos)
      << plan.status();
  EXPECT_NE(plan.status().message().find("past 100000 configurations"), std::string::npos);
}

TEST(SweepGrid, ShardsPartitionTheGrid) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(kTwoGrids, "t.textproto", "");
  ASSERT_TRUE(plan.ok());
  std::multiset<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    for (const SweepJob& j : SelectShard(plan->jobs, *ParseShard(absl::StrCat(k, "/3")))) {
      seen.insert(j.Label() + j.trace_file);
    }
  }
  std::multiset<std::string> all;
  for (const SweepJob& j : plan->jobs) all.insert(j.Label() + j.trace_file);
  EXPECT_EQ(seen, all);
  EXPECT_FALSE(ParseShard("0/3").ok());
  EXPECT_FALSE(ParseShard("4/3").ok());
  EXPECT_FALSE(ParseShard("2").ok());
}

TEST(SweepRunner, StoresEachConfigurationOnceAndSkipsStoredOnes) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(
      R"pb(tokens: 8
           grid {
             device: "oneplus12"
             model: "bamboo-7b"
             strategy: [ "powerinfer2", "llmflash", "llamacpp", "in_memory" ]
             memory_fraction: [ 0.05, 0.6 ]
           })pb",
      "r.textproto", "");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string db = ::testing::TempDir() + "/sweep_runner.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  int64_t calls = 0;
  absl::StatusOr<SweepOutcome> first = RunSweep(
      plan->jobs, {.db = db, .jobs = 2, .progress = [&](const SweepProgress&) { ++calls; }});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(calls, 8);
  EXPECT_TRUE(first->failures.empty()) << first->failures.front();
  // 5 % of the model is below every strategy's resident set; in_memory needs it all.
  EXPECT_EQ(first->infeasible, 5);
  EXPECT_EQ(first->ran, 3);
  absl::StatusOr<SweepOutcome> again = RunSweep(plan->jobs, {.db = db, .jobs = 2});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ran, 0);
  EXPECT_EQ(again->skipped, 3);
}

// powerinfer2's default cache policy is lru: naming it gives the same run.
TEST(SweepRunner, RunsTwoJobsWithTheSameResolvedConfigurationOnce) {
  absl::StatusOr<SweepPlan> plan = ParseSweep(
      R"pb(tokens: 8
           grid {
             device: "oneplus12"
             model: "bamboo-7b"
             strategy: "powerinfer2"
             memory_fraction: 0.6
           }
           grid {
             device: "oneplus12"
             model: "bamboo-7b"
             strategy: "powerinfer2"
             policy: "lru"
             memory_fraction: 0.6
           })pb",
      "dup.textproto", "");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 2u);
  const std::string db = ::testing::TempDir() + "/sweep_dup.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  int64_t calls = 0;
  absl::StatusOr<SweepOutcome> out = RunSweep(
      plan->jobs, {.db = db, .jobs = 2, .progress = [&](const SweepProgress&) { ++calls; }});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ran, 1);
  EXPECT_EQ(out->duplicates, 1);
  EXPECT_EQ(out->skipped, 0);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace sparseflash::cli
