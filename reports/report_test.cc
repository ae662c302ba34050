#include "reports/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "reports/report_sections.h"
#include "reports/svg_chart.h"
#include "reports/test_db_path.h"

namespace sparseflash {
namespace {

RunRow MakeRun(const std::string& strategy, int64_t memory, double tps,
               const std::string& policy = "", const std::string& device = "phone<1>",
               double hit = -1) {
  RunRow r;
  r.config.device = device;
  r.config.model = "m7b";
  r.config.strategy = strategy;
  r.config.policy = policy;
  r.config.memory_bytes = memory;
  r.config.tokens = 4;
  r.decode_tokens_per_s = tps;
  const int64_t cache = memory / 2;
  r.figures_json = absl::StrCat(
      R"({"decode_tokens_per_s":)", tps, R"(,"hit_rate":)", hit >= 0 ? hit : 0.5 + memory / 1e11,
      R"(,"io_stall_share":0.25,"flash_bytes_per_token":1e6,"cache_bytes":)", cache,
      R"(,"breakdown_ms":{"attention":1,"predictor":0,"ffn_compute":2,"io_wait":3,)",
      R"("memory_management":0,"other":0.5},"options":{"policy":"lru"}})");
  r.token_latency_ms = {1000 / tps, 1000 / tps, 2000 / tps, 500 / tps};
  return r;
}

// A study with two budgets, three strategies, two policies and one replay.
std::string MakeDb() {
  const std::string path = FreshDbPath("report.db");
  auto db = *ResultsDb::Open(path);
  EXPECT_TRUE(db->Insert(MakeRun("llamacpp", 2'000'000'000, 0.1)).ok());
  EXPECT_TRUE(db->Insert(MakeRun("llamacpp", 3'000'000'000, 0.125)).ok());
  EXPECT_TRUE(db->Insert(MakeRun("llmflash", 3'000'000'000, 1.0)).ok());
  EXPECT_TRUE(db->Insert(MakeRun("powerinfer2", 2'000'000'000, 2.0)).ok());
  const int64_t predicted = *db->Insert(MakeRun("powerinfer2", 3'000'000'000, 4.0));
  EXPECT_TRUE(
      db->Insert(MakeRun("powerinfer2", 3'000'000'000, 3.0, "s3fifo", "phone<1>", 0.4)).ok());
  EXPECT_TRUE(
      db->Insert(MakeRun("powerinfer2", 3'000'000'000, 3.5, "belady", "phone<1>", 0.8)).ok());
  RunRow real = MakeRun("powerinfer2", 3'000'000'000, 5.0);
  real.mode = "real";
  real.linked_run = predicted;
  EXPECT_TRUE(db->Insert(real).ok());
  // A second replay of the same prediction, its compute rates checked around it.
  RunRow checked = MakeRun("powerinfer2", 3'000'000'000, 4.5);
  checked.mode = "real";
  checked.linked_run = predicted;
  checked.figures_json.insert(checked.figures_json.size() - 1,
                              R"(,"compute_now":{"gemv":0.9,"predicted_decode_tokens_per_s":3.6})");
  const absl::StatusOr<int64_t> checked_id = db->InsertMeasurement(checked);
  EXPECT_TRUE(checked_id.ok()) << checked_id.status();
  return path;
}

TEST(Report, AReplayWithOnlyItsStorageCheckedHasItsPredictionAtTheRatesNow) {
  const std::string path = FreshDbPath("storage_now.db");
  auto db = *ResultsDb::Open(path);
  const int64_t predicted = *db->Insert(MakeRun("llmflash", 3'000'000'000, 4.0));
  RunRow checked = MakeRun("llmflash", 3'000'000'000, 5.0);
  checked.mode = "real";
  checked.linked_run = predicted;
  checked.figures_json.insert(
      checked.figures_json.size() - 1,
      R"(,"storage_now":{"direct":0.8,"predicted_decode_tokens_per_s":4.6})");
  ASSERT_TRUE(db->InsertMeasurement(checked).ok());
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->replays.size(), 1u);
  EXPECT_DOUBLE_EQ(d->replays[0].measured->predicted_now_tokens_per_s, 4.6);
}

TEST(Report, TablesMatchTheDatabase) {
  absl::StatusOr<ReportData> d = LoadReportData(MakeDb());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->runs.size(), 9u);
  ASSERT_EQ(d->studies.size(), 1u);
  const Study& s = d->studies[0];
  ASSERT_EQ(s.curves.size(), 3u);
  EXPECT_EQ(s.curves.at("powerinfer2").size(), 2u);  // the policy runs are not on the curve
  EXPECT_DOUBLE_EQ(s.curves.at("powerinfer2")[1].run->tokens_per_s, 4.0);

  Table budgets = BudgetTable(s);
  ASSERT_EQ(budgets.rows.size(), 2u);
  EXPECT_EQ(budgets.header[1], "llamacpp");
  EXPECT_DOUBLE_EQ(budgets.rows[1][1].value, 0.125);
  EXPECT_EQ(budgets.rows[0][2].text, "–");  // llmflash did not run at 2 GB
  EXPECT_EQ(budgets.rows[1].back().text, "powerinfer2");

  bool found = false;
  for (const Speedup& sp : s.speedups) {
    if (sp.strategy == "powerinfer2" && sp.baseline == "llamacpp" &&
        sp.memory_bytes == 3'000'000'000) {
      EXPECT_DOUBLE_EQ(sp.factor, 4.0 / 0.125);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(s.chosen_budget, 3'000'000'000);
  EXPECT_EQ(s.at_chosen.size(), 3u);

  ASSERT_EQ(s.policies.size(), 1u);                    // only powerinfer2 ran several policies
  EXPECT_EQ(s.policies.at("powerinfer2").size(), 3u);  // lru (the default's), s3fifo, belady
  EXPECT_TRUE(s.policies.at("powerinfer2").count("lru"));

  // The policy table: fastest first, against LRU and as a share of Belady's hits.
  Table policies = PolicyTable(s);
  ASSERT_EQ(policies.rows.size(), 3u);
  EXPECT_EQ(policies.rows[0][2].text, "lru");
  EXPECT_EQ(policies.rows[1][2].text, "belady");
  EXPECT_EQ(policies.rows[2][2].text, "s3fifo");
  EXPECT_DOUBLE_EQ(policies.rows[2][5].value, 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(policies.rows[2][6].value, 100 * 0.4 / 0.8);
  EXPECT_DOUBLE_EQ(policies.rows[0][6].value, 100 * 0.53 / 0.8);
  EXPECT_DOUBLE_EQ(policies.rows[1][6].value, 100.0);

  ASSERT_EQ(d->replays.size(), 2u);
  EXPECT_DOUBLE_EQ(d->replays[0].error, 4.0 / 5.0 - 1);
  Table replays = ReplayTable(*d);
  ASSERT_EQ(replays.rows.size(), 3u);  // two replays and the medians
  EXPECT_DOUBLE_EQ(replays.rows[0][4].value, 5.0);
  EXPECT_DOUBLE_EQ(replays.rows[0][6].value, -20.0);
  EXPECT_EQ(replays.rows[0][7].text, "–");  // not checked
  EXPECT_DOUBLE_EQ(replays.rows[1][7].value, 3.6);
  EXPECT_DOUBLE_EQ(replays.rows[1][8].value, 100 * (3.6 / 4.5 - 1));
  EXPECT_DOUBLE_EQ(replays.rows[2][6].value, 100 * ((1 - 4.0 / 4.5) + 0.2) / 2);
  EXPECT_DOUBLE_EQ(replays.rows[2][8].value, -100 * (3.6 / 4.5 - 1));

  const std::string headline = StudyHeadline(s);
  EXPECT_NE(headline.find("powerinfer2 is fastest from 2.00 GB to 3.00 GB"), std::string::npos)
      << headline;
  EXPECT_NE(headline.find("20.0-32.0x llama.cpp, 4.0x LLM in a Flash"), std::string::npos)
      << headline;
}

// A real run that maps its weights cannot see the page cache's hits or the
// device's busy time: those figures are stored as null and read as "–", not 0.
TEST(Report, FiguresARunCouldNotObserveReadAsADash) {
  const std::string path = FreshDbPath("unobserved.db");
  {
    auto db = *ResultsDb::Open(path);
    RunRow real = MakeRun("llamacpp", 3'000'000'000, 0.4);
    real.mode = "real";
    real.figures_json =
        R"({"decode_tokens_per_s":0.4,"hit_rate":null,"io_stall_share":null,)"
        R"("flash_bytes_per_token":4e9,"not_observed":["hit_rate","io_stall_share"]})";
    ASSERT_TRUE(db->Insert(real).ok());
  }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  Table runs = RunsTable(*d);
  ASSERT_EQ(runs.rows.size(), 1u);
  auto column = [&](const std::string& name) {
    return std::find(runs.header.begin(), runs.header.end(), name) - runs.header.begin();
  };
  EXPECT_EQ(runs.rows[0][column("hit rate (%)")].text, "–");
  EXPECT_EQ(runs.rows[0][column("I/O stall (%)")].text, "–");
  EXPECT_EQ(runs.rows[0][column("flash MB/token")].text, "4000");
}

TEST(Report, ByteColumnsTakeTheUnitThatFitsTheirLargestValue) {
  EXPECT_STREQ(ByteUnitFor(4.66e9).name, "GB");
  EXPECT_STREQ(ByteUnitFor(1e9).name, "GB");
  EXPECT_STREQ(ByteUnitFor(999e6).name, "MB");
  EXPECT_STREQ(ByteUnitFor(219'000).name, "kB");
  EXPECT_STREQ(ByteUnitFor(12).name, "B");
  EXPECT_EQ(FormatMemory(2'260'000'000), "2.26 GB");
  EXPECT_EQ(FormatMemory(219'360), "219.36 kB");
  // A tiny model's budgets (the TinyStories model: hundreds of kB) read in kB,
  // not "0.00 GB", in the budget table, the headline and the runs table.
  const std::string path = FreshDbPath("tiny.db");
  {
    auto db = *ResultsDb::Open(path);
    ASSERT_TRUE(db->Insert(MakeRun("llamacpp", 219'000, 100)).ok());
    ASSERT_TRUE(db->Insert(MakeRun("powerinfer2", 219'000, 400)).ok());
    ASSERT_TRUE(db->Insert(MakeRun("powerinfer2", 300'000, 500)).ok());
  }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->studies.size(), 1u);
  const Table budgets = BudgetTable(d->studies[0]);
  EXPECT_EQ(budgets.header[0], "memory budget (kB)");
  ASSERT_EQ(budgets.rows.size(), 2u);
  EXPECT_EQ(budgets.rows[0][0].text, "219.00");
  EXPECT_DOUBLE_EQ(budgets.rows[1][0].value, 300.0);
  const std::string headline = StudyHeadline(d->studies[0]);
  EXPECT_NE(headline.find("powerinfer2 is fastest at 219.00 kB"), std::string::npos) << headline;
  EXPECT_NE(headline.find("at 300.00 kB"), std::string::npos) << headline;
  const Table runs = RunsTable(*d);
  const auto memory = std::find(runs.header.begin(), runs.header.end(), "memory (kB)");
  ASSERT_NE(memory, runs.header.end());
  EXPECT_EQ(runs.rows[0][memory - runs.header.begin()].text, "219.00");
  // The cache column takes its own unit: half of each budget, still kB.
  EXPECT_NE(std::find(runs.header.begin(), runs.header.end(), "cache (kB)"), runs.header.end());
}

TEST(Report, WritesEveryFileWithTheNumbers) {
  absl::StatusOr<ReportData> d = LoadReportData(MakeDb());
  ASSERT_TRUE(d.ok());
  const std::string dir = ::testing::TempDir() + "/report_out";
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::vector<std::string>> files = WriteReport(*d, dir);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 8u);  // html, md and six CSV files (validation.csv too)
  auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string html = read("report.html");
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  // tokens/s, 2 speedups, policies, time split, CDF, predicted vs measured.
  EXPECT_EQ(svgs, 7u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("phone&lt;1&gt;"), std::string::npos);  // names are escaped
  EXPECT_EQ(html.find("phone<1>"), std::string::npos);

  // The policies are in an HTML table too, and in policies.csv.
  EXPECT_NE(html.find("Cache policies, m7b on phone&lt;1&gt;"), std::string::npos);
  const std::vector<std::string> policy_lines =
      absl::StrSplit(read("policies.csv"), '\n', absl::SkipEmpty());
  ASSERT_EQ(policy_lines.size(), 4u);
  EXPECT_EQ(policy_lines[3], "phone<1>,m7b,powerinfer2,3,s3fifo,3,40,0.75,50");

  // runs.csv: one line per run plus the header, figures at full precision.
  const std::vector<std::string> lines = absl::StrSplit(read("runs.csv"), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_NE(lines[1].find(",0.1,"), std::string::npos) << lines[1];
  const std::string budgets = read("budgets.csv");
  EXPECT_NE(budgets.find("phone<1>,m7b,powerinfer2,3000000000,4,"), std::string::npos) << budgets;
  EXPECT_NE(read("speedups.csv").find("powerinfer2,llamacpp,3000000000,32"), std::string::npos);
  EXPECT_NE(read("report.md").find("| 3.00 | 0.125 | 1.00 | 4.00 |"), std::string::npos)
      << read("report.md");
  // The replay checked around its run shows its prediction at the rates measured then.
  EXPECT_NE(read("report.md").find("| 4.50 | 4.00 | -11.1 | 3.60 | -20.0 |"), std::string::npos)
      << read("report.md");
}

TEST(Report, AnEmptyDatabaseGivesAReportThatSaysSo) {
  const std::string path = FreshDbPath("empty.db");
  { ASSERT_TRUE(ResultsDb::Open(path).ok()); }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(RenderHtml(*d).find("0 runs"), std::string::npos);
}

TEST(Report, UnwritableOutputIsNamed) {
  absl::StatusOr<ReportData> d = LoadReportData(MakeDb());
  ASSERT_TRUE(d.ok());
  const std::string file = ::testing::TempDir() + "/not_a_dir";
  std::ofstream(file) << "x";
  absl::StatusOr<std::vector<std::string>> files = WriteReport(*d, file + "/sub");
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("not_a_dir"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// Two policies with the same hit rates (lines on top of each other) are both
// named, their names at least 15 px apart, and their markers of different sizes.
TEST(Report, CoincidingPolicyLinesStayVisible) {
  XyChart c{.title = "t", .x = {.label = "x"}, .y = {.label = "y", .max = 100}, .end_labels = true};
  for (const char* name : {"lru", "window", "sieve"}) {
    ChartSeries s{.name = name, .color = ColorFor(name)};
    s.points = {{1, 40}, {2, 60}, {3, name == std::string("sieve") ? 61.0 : 70.0}};
    c.series.push_back(s);
  }
  const std::string svg = RenderXyChart(c);
  std::vector<double> label_y;
  for (const char* name : {"lru", "window", "sieve"}) {
    const size_t at = svg.find(absl::StrCat(">", name, "</text>"));
    ASSERT_NE(at, std::string::npos) << name;
    const size_t y = svg.rfind("y=\"", at);
    label_y.push_back(std::stod(svg.substr(y + 3)));
  }
  std::sort(label_y.begin(), label_y.end());
  for (size_t i = 1; i < label_y.size(); ++i) EXPECT_GE(label_y[i] - label_y[i - 1], 15 - 1e-9);
  std::set<std::string> radii;
  for (size_t p = svg.find(" r=\""); p != std::string::npos; p = svg.find(" r=\"", p + 1)) {
    radii.insert(svg.substr(p + 4, 3));
  }
  EXPECT_EQ(radii.size(), 3u);
}

// Stored validation results become a section: a log-log chart with the +-15 %
// band and a table with each entry's error and the per-group median.
TEST(Report, ValidationResultsGetTheirSectionAndTable) {
  const std::string path = FreshDbPath("validation.db");
  {
    auto db = *ResultsDb::Open(path);
    ASSERT_TRUE(db->PutValidation({.entry = "a-one",
                                   .group = "a",
                                   .source = "Paper T1",
                                   .tag = "[v1]",
                                   .metric = "tokens/s",
                                   .published = 10,
                                   .simulated = 12,
                                   .error = 0.2,
                                   .tolerance = 0.25})
                    .ok());
    ASSERT_TRUE(db->PutValidation({.entry = "a-two",
                                   .group = "a",
                                   .source = "Paper T1",
                                   .tag = "[v1]",
                                   .metric = "tokens/s",
                                   .known_miss = "an input nobody published",
                                   .published = 4,
                                   .simulated = 2,
                                   .error = -0.5,
                                   .tolerance = 0.25})
                    .ok());
  }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->validation.size(), 2u);
  const std::string html = RenderHtml(*d);
  EXPECT_NE(html.find("id=\"validation\""), std::string::npos);
  EXPECT_NE(html.find("+15 %"), std::string::npos);
  const Table t = ValidationTable(*d);
  ASSERT_EQ(t.rows.size(), 4u);  // two entries, group a, all
  EXPECT_EQ(t.rows[0][7].text, "yes");
  EXPECT_EQ(t.rows[1][7].text, "no");
  EXPECT_EQ(t.rows[0][8].text, "");  // within: nothing to explain
  EXPECT_EQ(t.rows[1][8].text, "an input nobody published");
  EXPECT_NE(html.find("an input nobody published"), std::string::npos);
  EXPECT_DOUBLE_EQ(t.rows[2][6].value, 35);  // median of 20 % and 50 %
  EXPECT_NE(RenderMarkdown(*d).find("## Validation against published results"), std::string::npos);
}

// A speedup over a baseline that caches almost nothing is quoted apart, and a
// stored published figure for the same device and model is printed with ours.
TEST(Report, HeadlineSeparatesDegenerateBaselinesAndQuotesPublishedFigures) {
  const std::string path = FreshDbPath("headline.db");
  {
    auto db = *ResultsDb::Open(path);
    ASSERT_TRUE(db->Insert(MakeRun("llamacpp", 2'000'000'000, 0.1, "", "phone<1>", 0.01)).ok());
    ASSERT_TRUE(db->Insert(MakeRun("llamacpp", 3'000'000'000, 0.125, "", "phone<1>", 0.5)).ok());
    ASSERT_TRUE(db->Insert(MakeRun("powerinfer2", 2'000'000'000, 2.0)).ok());
    const int64_t id = *db->Insert(MakeRun("powerinfer2", 3'000'000'000, 4.0));
    ASSERT_TRUE(db->PutValidation({.entry = "x",
                                   .group = "g",
                                   .source = "Paper T6",
                                   .tag = "[v3]",
                                   .metric = "decode tokens/s",
                                   .published = 5,
                                   .simulated = 4,
                                   .error = -0.2,
                                   .tolerance = 0.25,
                                   .run_id = id})
                    .ok());
  }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->studies.size(), 1u);
  const std::string h = StudyHeadline(d->studies[0], false);
  EXPECT_NE(h.find("(32.0x llama.cpp; 20.0x where llama.cpp's cache hits under 5 %)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("Published for this phone and model: Paper T6 [v3]: decode tokens/s 5, "
                   "simulated here 4 (-20 %)"),
            std::string::npos)
      << h;
}

}  // namespace
}  // namespace sparseflash
