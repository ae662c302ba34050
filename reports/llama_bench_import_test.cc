// llama-bench's JSON as measured llamacpp runs: the fixture imports once (the
// prompt-only test skipped), a second import stores nothing new, and damaged
// files are refused with the entry and field named and nothing written; a new
// measurement of a stored configuration is stored beside it.
#include "reports/llama_bench_import.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reports/report_data.h"
#include "reports/report_sections.h"
#include "reports/test_db_path.h"

namespace sparseflash {
namespace {

const LlamaBenchContext kContext{
    .device = "host", .model = "mistral-7b", .memory_bytes = 2'000'000'000};

TEST(LlamaBenchImport, StoresEachTextGenerationTestOnceAsARealLlamacppRun) {
  auto db = *ResultsDb::Open(FreshDbPath("llama_bench.db"));
  absl::StatusOr<ImportCounts> first =
      ImportLlamaBench(*db, "reports/testdata/llama-bench.json", kContext);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->stored, 1);
  EXPECT_EQ(first->skipped_prompt_only, 1);
  absl::StatusOr<ImportCounts> again =
      ImportLlamaBench(*db, "reports/testdata/llama-bench.json", kContext);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stored, 0);
  EXPECT_EQ(again->already_stored, 1);

  absl::StatusOr<std::vector<RunRow>> rows = db->ReadRuns();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const RunRow& r = rows->front();
  EXPECT_EQ(r.mode, "real");
  EXPECT_EQ(r.config.strategy, "llamacpp");
  EXPECT_EQ(r.config.model, "mistral-7b");
  EXPECT_EQ(r.config.memory_bytes, 2'000'000'000);
  EXPECT_EQ(r.config.threads, 2);
  EXPECT_EQ(r.config.tokens, 16u);
  EXPECT_DOUBLE_EQ(r.decode_tokens_per_s, 0.35);
  EXPECT_EQ(nlohmann::json::parse(r.config.options_json)["model_file"], "mistral-7b-q4_0.gguf");
}

TEST(LlamaBenchImport, AnotherMeasurementOfTheSameConfigurationIsStoredBesideIt) {
  auto db = *ResultsDb::Open(FreshDbPath("llama_bench_twice.db"));
  const std::string entry =
      R"({"model_filename":"m.gguf","n_threads":2,"n_prompt":0,"n_gen":16,"avg_ts":)";
  for (const char* speed : {"1.5", "1.25"}) {
    const std::string path = ::testing::TempDir() + "/bench.json";
    std::ofstream(path) << "[" << entry << speed << "}]";
    absl::StatusOr<ImportCounts> counts = ImportLlamaBench(*db, path, kContext);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ(counts->stored, 1) << speed;
  }
  absl::StatusOr<std::vector<RunRow>> rows = db->ReadRuns();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_DOUBLE_EQ((*rows)[1].decode_tokens_per_s, 1.25);
  EXPECT_EQ((*rows)[1].origin, "measurement 2");
}

TEST(LlamaBenchImport, DamagedFilesNameTheEntryAndFieldAndWriteNothing) {
  const std::string ok_entry =
      R"({"model_filename":"m.gguf","n_threads":2,"n_prompt":0,"n_gen":16,"avg_ts":1.5})";
  struct Case {
    std::string text, expect;
  };
  for (const Case& c : {Case{"{}", "not a JSON array"}, Case{"[1]", "entry 0 is not an object"},
                        Case{"[" + ok_entry + R"(,{"n_gen":16})" + "]", "entry 1: field n_prompt"},
                        Case{R"([{"model_filename":"m","n_threads":2,"n_prompt":0,"n_gen":16,)"
                             R"("avg_ts":0}])",
                             "avg_ts must be positive"},
                        Case{"[" + ok_entry + ",", "not a JSON array"}}) {
    absl::StatusOr<std::vector<RunRow>> runs = ParseLlamaBench(c.text, "bench.json", kContext);
    ASSERT_FALSE(runs.ok()) << c.text;
    EXPECT_NE(runs.status().message().find(c.expect), std::string::npos) << runs.status();
    EXPECT_NE(runs.status().message().find("bench.json"), std::string::npos);
  }
  auto db = *ResultsDb::Open(FreshDbPath("llama_bench_bad.db"));
  EXPECT_FALSE(ImportLlamaBench(*db, "no/such/file.json", kContext).ok());
  EXPECT_EQ(*db->CountRuns(), 0);
}

// An imported measurement appears in the report beside the simulated llamacpp
// run of the same device, model and budget, with the error.
TEST(LlamaBenchImport, TheReportPutsTheMeasurementBesideTheSimulation) {
  const std::string path = FreshDbPath("llama_bench_report.db");
  {
    auto db = *ResultsDb::Open(path);
    ASSERT_TRUE(ImportLlamaBench(*db, "reports/testdata/llama-bench.json", kContext).ok());
    RunRow sim;
    sim.config = {.device = "host",
                  .model = "mistral-7b",
                  .strategy = "llamacpp",
                  .memory_bytes = 2'000'000'000,
                  .tokens = 16};
    sim.figures_json = R"({"decode_tokens_per_s":0.28})";
    sim.decode_tokens_per_s = 0.28;
    ASSERT_TRUE(db->Insert(sim).ok());
  }
  absl::StatusOr<ReportData> d = LoadReportData(path);
  ASSERT_TRUE(d.ok()) << d.status();
  const Table t = MeasuredTable(*d);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(t.rows[0][5].value, 0.35);
  EXPECT_DOUBLE_EQ(t.rows[0][6].value, 0.28);
  EXPECT_NEAR(t.rows[0][7].value, -20, 1e-9);
}

}  // namespace
}  // namespace sparseflash
