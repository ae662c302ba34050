// The README's main command: `sparseflash demo` writes results.db with the
// built-in sweep (two phones x two models x four strategies over eight to ten budgets and
// the policy comparison) and the report, and a second run reuses every run.
// The replay part (calibration and real reads) is covered by replay_test.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "reports/results_db.h"
#include "tests/cli_runner.h"
#include "tests/repo_data.h"

using sparseflash::testing::RepoData;

namespace sparseflash {
namespace {

std::string Demo(const std::string& out, int* status) {
  const testing::CliOutcome o = testing::Shell(
      testing::CliCommandLine(absl::StrCat("demo --no-replay --out ", out, " --tiny-model ",
                                           RepoData("tinystories-relu-260k"), " 2>/dev/null")));
  *status = o.code;
  return o.out;
}

TEST(Demo, WritesTheDatabaseAndTheReportAndResumes) {
#if defined(SF_SANITIZED)
  GTEST_SKIP() << "the demo's whole sweep takes about ten minutes under a sanitizer; the release "
                  "suite runs it, and the sweep, report and TinyStories paths have their own "
                  "tests under the sanitizers";
#endif
  // Unique per process: another suite may run the demo test at the same time.
  const std::string out = absl::StrCat(::testing::TempDir(), "/demo-", getpid());
  std::filesystem::remove_all(out);
  int status = -1;
  const std::string first = Demo(out, &status);
  ASSERT_EQ(status, 0) << first;
  EXPECT_TRUE(std::filesystem::exists(out + "/report/report.html"));
  EXPECT_TRUE(std::filesystem::exists(out + "/report/runs.csv"));
  EXPECT_NE(first.find("Report:"), std::string::npos);
  EXPECT_NE(first.find("identical to the dense golden text"), std::string::npos) << first;

  auto db = ResultsDb::Open(out + "/results.db");
  ASSERT_TRUE(db.ok());
  auto rows = (*db)->ReadRuns();
  ASSERT_TRUE(rows.ok());
  std::set<std::tuple<std::string, std::string, std::string>> cells;
  std::map<std::tuple<std::string, std::string, std::string>, int> budgets;
  std::set<std::string> policies;
  for (const RunRow& r : *rows) {
    cells.insert({r.config.device, r.config.model, r.config.strategy});
    if (r.config.policy.empty()) ++budgets[{r.config.device, r.config.model, r.config.strategy}];
    policies.insert(r.config.policy);
  }
  // Every device x model x offloading strategy ran; the dense model in DRAM only
  // fits for Mistral (Mixtral's 26 GB exceed what either phone gives one app).
  EXPECT_EQ(cells.size(), 2u * 2 * 3 + 2);
  EXPECT_TRUE(cells.count({"oneplus-ace2", "turbosparse-mistral-7b", "in_memory"}));
  for (const auto& [cell, n] : budgets) {
    if (std::get<2>(cell) != "in_memory") {
      EXPECT_GE(n, 6) << std::get<0>(cell) << std::get<2>(cell);
    }
  }
  EXPECT_GE(policies.size(), 6u);

  const std::string second = Demo(out, &status);
  ASSERT_EQ(status, 0) << second;
  // Everything the sweep wants is stored; the database also holds the runs of
  // the published figures' configurations the sweep does not cover.
  const size_t at = second.find("0 simulated now, ");
  ASSERT_NE(at, std::string::npos) << second;
  const size_t stored = std::stoul(second.substr(at + 17));
  EXPECT_GT(stored, 100u);
  EXPECT_LE(stored, rows->size());
  EXPECT_NE(second.find("published figures for these phones and models"), std::string::npos)
      << second;
  if (!HasFailure()) std::filesystem::remove_all(out);  // kept to be looked at otherwise
}

}  // namespace
}  // namespace sparseflash
