// The validation catalog (validation/*.textproto, one source of truth for the
// published results and for why the simulation misses some) through the
// simulator: every entry runs, and every entry whose error the catalog does not
// explain (known_miss) stays within its tolerance. A known miss that starts to
// agree fails too, and docs/dev-targets.md must hold the table `validate
// --markdown` prints, so both are updated on purpose.
#include "tools/validation.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"
#include "tests/cli_runner.h"
#include "traces/test_util.h"

namespace sparseflash::cli {
namespace {

TEST(Validation, EveryEntryRunsAndStaysWithinItsToleranceUnlessExplained) {
#if defined(SF_SANITIZED)
  GTEST_SKIP() << "the whole catalog takes minutes under a sanitizer; the release suite runs it";
#endif
  absl::StatusOr<std::vector<ValidationCase>> cases = LoadValidationCatalog({});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_GE(cases->size(), 30u);
  const std::vector<ValidationResult> results = RunValidation(*cases, {.jobs = 2});
  for (const ValidationResult& r : results) {
    const std::string& id = r.entry->id;
    const bool known = !r.entry->known_miss.empty();
    if (!r.status.ok()) {
      EXPECT_TRUE(known) << id << " failed: " << r.status;
      continue;
    }
    ASSERT_TRUE(std::isfinite(r.simulated)) << id;
    std::printf("%-32s %+8.1f%%  %s\n", id.c_str(), 100 * r.error, r.detail.c_str());
    if (known) {
      EXPECT_FALSE(r.within()) << id << " now agrees (" << 100 * r.error
                               << " %): clear its known_miss in the catalog";
    } else {
      EXPECT_TRUE(r.within()) << id << ": " << 100 * r.error << " % off (tolerance "
                              << 100 * r.entry->tolerance << " %): " << r.detail
                              << "; find the cause, or name it in the entry's known_miss";
    }
    // Every miss is printed with its reason, and only misses are.
    EXPECT_EQ(r.Explanation().empty(), r.within() && !known) << id;
  }
  // docs/dev-targets.md shows what `validate --markdown` prints now.
  std::ifstream in("docs/dev-targets.md");
  ASSERT_TRUE(in) << "docs/dev-targets.md (tests run from the repository root)";
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(ValidationMarkdown(results)), std::string::npos)
      << "docs/dev-targets.md is out of date: regenerate its table with "
         "`sparseflash validate --markdown`; it prints:\n"
      << ValidationMarkdown(results);
}

// A user's catalog says why its misses miss, and every table prints that
// reason beside the miss: a known miss, an unexplained one, and a known miss
// that agrees now (a trace statistic, so no device is simulated).
TEST(Validation, EachMissIsPrintedWithItsReason) {
  const std::string file = testing::TempPath("user_catalog.textproto");
  {
    std::ofstream out(file);
    for (const char* id : {"u-known", "u-unexplained", "u-agrees"}) {
      out << "entry { id: \"" << id << "\" group: \"u\" source: \"mine\" tag: \"[ours]\""
          << " model: \"tinystories-relu-260k\" metric: TRACE_NEW_PER_TOKEN window: 2"
          << (std::string(id) == "u-agrees" ? " published: 0.01 tolerance: 1000"
                                            : " published: 0.9")
          << (std::string(id) == "u-unexplained" ? "" : " known_miss: \"the reason\"") << " }\n";
    }
  }
  absl::StatusOr<std::vector<ValidationCase>> all = LoadValidationCatalog({file});
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<ValidationCase> mine;
  for (const ValidationCase& c : *all) {
    if (c.group == "u") mine.push_back(c);
  }
  ASSERT_EQ(mine.size(), 3u);
  const std::vector<ValidationResult> results = RunValidation(mine, {.jobs = 1});
  ASSERT_TRUE(results[0].status.ok()) << results[0].status;
  EXPECT_FALSE(results[0].within());
  EXPECT_EQ(results[0].Explanation(), "the reason");
  EXPECT_NE(results[1].Explanation().find("no reason recorded"), std::string::npos);
  EXPECT_TRUE(results[2].within());
  EXPECT_NE(results[2].Explanation().find("agrees now"), std::string::npos);
  const std::string md = ValidationMarkdown(results);
  EXPECT_NE(md.find("- `u-known` ("), std::string::npos) << md;
  EXPECT_NE(md.find("): the reason\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- `u-unexplained` ("), std::string::npos) << md;
}

// A user's run that repeats a catalog entry's configuration shows that entry's
// published figure beside its own: the four in-memory Mistral-7B entries of
// PowerInfer-2's Table 2 share one configuration. Naming a default explicitly
// or another seed is the same configuration; another thread count or a trace
// file is not, and the entries on the same device, model and strategy are
// named instead.
TEST(Validation, ARunShowsThePublishedFiguresItRepeats) {
  absl::StatusOr<std::vector<ValidationCase>> catalog = LoadValidationCatalog({});
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const ValidationCase* entry = nullptr;
  for (const ValidationCase& v : *catalog) {
    if (v.id == "b-inmemory-powerinfer") entry = &v;
  }
  ASSERT_NE(entry, nullptr);
  SimulationConfig c = entry->config;
  c.tokens = 40;
  c.seed = 5;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  ASSERT_TRUE(r.ok()) << r.status();
  auto ids = [&](const SimulationConfig& config) {
    std::vector<std::string> out;
    for (const ValidationResult& p : PublishedForRun(*catalog, config, *r)) {
      out.push_back(p.entry->id);
    }
    return out;
  };
  const std::vector<std::string> expected = {"b-inmemory-powerinfer", "b-inmemory-llmflash",
                                             "b-inmemory-powerinfer-dram",
                                             "b-inmemory-llmflash-dram"};
  EXPECT_EQ(ids(c), expected);
  const std::vector<ValidationResult> published = PublishedForRun(*catalog, c, *r);
  ASSERT_FALSE(published.empty());
  const double tokens_per_s = sparseflash::Summarize(r->record).decode_tokens_per_s;
  EXPECT_DOUBLE_EQ(published[0].simulated, tokens_per_s);
  EXPECT_DOUBLE_EQ(published[0].error, tokens_per_s / 12.4 - 1);

  SimulationConfig named = c;  // the resolved thread count, named
  named.threads = std::stoi(r->options.at("threads"));
  EXPECT_EQ(ids(named), expected);
  SimulationConfig other = c;
  other.threads = named.threads == 1 ? 2 : 1;
  EXPECT_TRUE(ids(other).empty());
  EXPECT_EQ(EntriesNear(*catalog, other), expected);  // where to look instead
  SimulationConfig from_file = c;
  from_file.trace_path = "recorded.trace";
  EXPECT_TRUE(ids(from_file).empty());
}

// `validate --json` gives each simulated entry the command line that runs it,
// and that command's run shows the entry's published figure: a budget given as
// a fraction of the weights (written in bytes), one given as the FFN's share
// with options, and one given as a size.
TEST(Validation, AnEntrysCommandRunsItsConfiguration) {
  absl::StatusOr<std::vector<ValidationCase>> catalog = LoadValidationCatalog({});
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  for (const std::string id :
       {"a-lf-table2-windowing", "c-ablation-cache", "b-inmemory-powerinfer"}) {
    const ValidationCase* entry = nullptr;
    for (const ValidationCase& v : *catalog) {
      if (v.id == id) entry = &v;
    }
    ASSERT_NE(entry, nullptr) << id;
    const std::string command = SimulateCommand(*entry);
    const std::string prefix = "sparseflash ";
    ASSERT_TRUE(command.starts_with(prefix)) << command;
    const testing::CliOutcome run = testing::Shell(
        testing::CliCommandLine(command.substr(prefix.size()) + " --tokens 16 --json") +
        " 2>/dev/null");
    ASSERT_EQ(run.code, 0) << command;
    const nlohmann::json out = nlohmann::json::parse(run.out);
    std::vector<std::string> published;
    for (const auto& p : out.at("published")) published.push_back(p.at("id"));
    EXPECT_NE(std::find(published.begin(), published.end(), id), published.end())
        << command << " shows " << out.at("published").dump();
  }
}

// A user's catalog may name a profile file whose path a shell would split:
// the command quotes it, so pasted as printed it still loads that file.
TEST(Validation, AnEntrysCommandQuotesWhatTheShellWouldSplit) {
  absl::StatusOr<std::vector<ValidationCase>> catalog = LoadValidationCatalog({});
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ValidationCase entry;
  for (const ValidationCase& v : *catalog) {
    if (v.id == "b-inmemory-powerinfer") entry = v;
  }
  ASSERT_EQ(entry.id, "b-inmemory-powerinfer");
  const std::string dir = ::testing::TempDir() + "/sf quote's dir " + std::to_string(::getpid());
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  entry.device_ref = dir + "/phone (copy).textproto";
  std::filesystem::copy_file("devices/catalog/oneplus12.textproto", entry.device_ref);
  const std::string command = SimulateCommand(entry);
  EXPECT_NE(command.find("--device '"), std::string::npos) << command;
  const testing::CliOutcome run =
      testing::Shell(testing::CliCommandLine(command.substr(std::string("sparseflash ").size()) +
                                             " --tokens 4 --json") +
                     " 2>/dev/null");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(run.code, 0) << command;
  EXPECT_EQ(nlohmann::json::parse(run.out).at("device").get<std::string>(), "oneplus12") << run.out;
}

}  // namespace
}  // namespace sparseflash::cli
