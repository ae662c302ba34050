#include "reports/results_db.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "reports/db_merge.h"
#include "reports/test_db_path.h"

namespace sparseflash {
namespace {

RunRow Row(int64_t memory) {
  RunRow r;
  r.config.device = "oneplus12";
  r.config.model = "bamboo-7b";
  r.config.strategy = "powerinfer2";
  r.config.memory_bytes = memory;
  r.config.tokens = 64;
  r.figures_json = R"({"decode_tokens_per_s": 10})";
  r.decode_tokens_per_s = 10;
  return r;
}

TEST(ResultsDb, CreatesTheSchemaAndStoresEachConfigurationOnce) {
  const std::string path = FreshDbPath("runs.db");
  {
    auto db = ResultsDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ((*db)->schema_version(), ResultsDb::kSchemaVersion);
    absl::StatusOr<int64_t> id = (*db)->Insert(Row(1 << 30));
    ASSERT_TRUE(id.ok()) << id.status();
    absl::StatusOr<int64_t> again = (*db)->Insert(Row(1 << 30));
    ASSERT_FALSE(again.ok());
    EXPECT_TRUE(absl::IsAlreadyExists(again.status()));
    RunRow real = Row(1 << 30);
    real.mode = "real";
    real.linked_run = *id;
    EXPECT_TRUE((*db)->Insert(real).ok());
    EXPECT_TRUE(*(*db)->Has(Row(1 << 30).config.Key(), "simulated"));
    EXPECT_FALSE(*(*db)->Has(Row(2 << 30).config.Key(), "simulated"));
  }
  auto reopened = ResultsDb::Open(path);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->CountRuns(), 2);
}

TEST(ResultsDb, AConfigurationMeasuredAgainIsStoredAsItsNextMeasurement) {
  auto db = ResultsDb::Open(FreshDbPath("measured.db"));
  ASSERT_TRUE(db.ok()) << db.status();
  const int64_t predicted = *(*db)->Insert(Row(1 << 30));
  RunRow real = Row(1 << 30);
  real.mode = "real";
  real.linked_run = predicted;
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    real.decode_tokens_per_s = 10 + i;
    real.figures_json = absl::StrCat(R"({"decode_tokens_per_s":)", 10 + i, "}");
    absl::StatusOr<int64_t> id = (*db)->InsertMeasurement(real);
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  EXPECT_TRUE(absl::IsAlreadyExists((*db)->Insert(real).status()));  // Insert still refuses
  // The same measurement again (a file imported twice) is refused.
  EXPECT_TRUE(absl::IsAlreadyExists((*db)->InsertMeasurement(real).status()));
  auto rows = (*db)->ReadRuns();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[1].origin, "");
  EXPECT_EQ((*rows)[2].origin, "measurement 2");
  EXPECT_EQ((*rows)[3].origin, "measurement 3");
  EXPECT_DOUBLE_EQ((*rows)[3].decode_tokens_per_s, 12);
  EXPECT_EQ((*rows)[3].linked_run, predicted);
  // Another error than a stored one is not taken for a repeat.
  real.linked_run = 999;   // no such run: refused by the foreign key where enforced
  real.mode = "measured";  // not a mode
  absl::StatusOr<int64_t> bad = (*db)->InsertMeasurement(real);
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(absl::IsAlreadyExists(bad.status())) << bad.status();
  EXPECT_EQ(*(*db)->CountRuns(), 4);
}

TEST(ResultsDb, KeysAreStableAndDistinguishConfigurations) {
  EXPECT_EQ(Row(1).config.Key(), Row(1).config.Key());
  EXPECT_NE(Row(1).config.Key(), Row(2).config.Key());
  RunRow other = Row(1);
  other.config.options_json = R"({"window":"5"})";
  EXPECT_NE(other.config.Key(), Row(1).config.Key());
  // The same trace content in another place is the same configuration.
  RunRow here = Row(1), there = Row(1);
  here.config.trace = "/a/x.trace";
  there.config.trace = "/b/x.trace";
  here.config.trace_hash = there.config.trace_hash = "0123456789abcdef";
  EXPECT_EQ(here.config.Key(), there.config.Key());
  there.config.trace_hash = "fedcba9876543210";
  EXPECT_NE(here.config.Key(), there.config.Key());
}

TEST(ResultsDb, ANewerSchemaIsRefused) {
  const std::string path = FreshDbPath("newer.db");
  { ASSERT_TRUE(ResultsDb::Open(path).ok()); }
  {
    auto db = ResultsDb::Open(path);
    ASSERT_TRUE(db.ok());
  }
  // Bump the version behind sparseflash's back.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = ResultsDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("newer"), std::string::npos);
}

// Two processes inserting into one file wait for each other; no row is lost.
TEST(ResultsDb, ConcurrentWritersWaitForEachOther) {
  const std::string path = FreshDbPath("shared.db");
  { ASSERT_TRUE(ResultsDb::Open(path).ok()); }
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      auto db = ResultsDb::Open(path);
      if (!db.ok()) _exit(1);
      for (int i = 0; i < 50; ++i) {
        if (!(*db)->Insert(Row(int64_t{p} * 1000 + i)).ok()) _exit(2);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto db = ResultsDb::Open(path);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->CountRuns(), 100);
}

TEST(ResultsDb, RunsReadBackAsWritten) {
  const std::string path = FreshDbPath("roundtrip.db");
  auto db = ResultsDb::Open(path);
  ASSERT_TRUE(db.ok());
  RunRow row = Row(3 << 20);
  row.token_latency_ms = {12.5, 13.25, 99.0};
  row.config.options_json = R"({"window":"5"})";
  ASSERT_TRUE((*db)->Insert(row).ok());
  auto rows = (*db)->ReadRuns();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const RunRow& r = rows->front();
  EXPECT_EQ(r.config.Key(), row.config.Key());
  EXPECT_EQ(r.token_latency_ms, row.token_latency_ms);
  EXPECT_EQ(r.figures_json, row.figures_json);
  EXPECT_EQ(r.version, SparseflashVersion());
  EXPECT_FALSE(r.created_at.empty());
}

// A database written by the first schema is migrated in place; its rows stay.
// A validation result is stored once per entry: a later one replaces it.
TEST(ResultsDb, ValidationResultsReplaceEarlierOnesOfTheSameEntry) {
  const std::string path = FreshDbPath("validation.db");
  auto db = ResultsDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  ValidationRow v{.entry = "a-x",
                  .group = "a",
                  .source = "Paper, Table 1",
                  .tag = "[LF]",
                  .metric = "I/O ms per token",
                  .detail = "d",
                  .published = 100,
                  .simulated = 110,
                  .error = 0.1,
                  .tolerance = 0.25};
  ASSERT_TRUE((*db)->PutValidation(v).ok());
  v.simulated = 95, v.error = -0.05;
  ASSERT_TRUE((*db)->PutValidation(v).ok());
  v.entry = "b-y";
  v.known_miss = "an input nobody published";
  ASSERT_TRUE((*db)->PutValidation(v).ok());
  auto rows = (*db)->ReadValidation();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  const ValidationRow& a = (*rows)[0].entry == "a-x" ? (*rows)[0] : (*rows)[1];
  EXPECT_DOUBLE_EQ(a.simulated, 95);
  EXPECT_DOUBLE_EQ(a.error, -0.05);
  EXPECT_EQ(a.source, "Paper, Table 1");
  EXPECT_EQ(a.version, SparseflashVersion());
  EXPECT_EQ(a.known_miss, "");
  const ValidationRow& b = (*rows)[0].entry == "b-y" ? (*rows)[0] : (*rows)[1];
  EXPECT_EQ(b.known_miss, "an input nobody published");
}

// A version-3 database (validation results without their reasons) is migrated
// in place; its results stay, with no reason recorded.
TEST(ResultsDb, VersionThreeValidationResultsAreMigrated) {
  const std::string path = FreshDbPath("v3.db");
  {
    auto db = ResultsDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->PutValidation({.entry = "a-x", .published = 1, .simulated = 2}).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(raw, "ALTER TABLE validation DROP COLUMN known_miss; PRAGMA user_version = 3;",
                   nullptr, nullptr, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  auto db = ResultsDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->schema_version(), ResultsDb::kSchemaVersion);
  auto rows = (*db)->ReadValidation();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_DOUBLE_EQ((*rows)[0].simulated, 2);
  EXPECT_EQ((*rows)[0].known_miss, "");
}

TEST(ResultsDb, VersionOneDatabaseIsMigrated) {
  const std::string path = FreshDbPath("v1.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE runs (id INTEGER PRIMARY KEY, config_key TEXT NOT NULL, mode TEXT NOT NULL,
  device TEXT NOT NULL, device_hash TEXT NOT NULL, model TEXT NOT NULL, trace TEXT NOT NULL,
  trace_hash TEXT NOT NULL, strategy TEXT NOT NULL, policy TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL, ffn_resident REAL NOT NULL, threads INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL, tokens INTEGER NOT NULL, seed INTEGER NOT NULL,
  options TEXT NOT NULL, figures TEXT NOT NULL, decode_tokens_per_s REAL NOT NULL,
  linked_run INTEGER REFERENCES runs(id), version TEXT NOT NULL, host TEXT NOT NULL,
  created_at TEXT NOT NULL, UNIQUE (config_key, mode));
INSERT INTO runs VALUES (1, 'k', 'simulated', 'oneplus12', 'h', 'bamboo-7b', 'generated', '',
  'powerinfer2', '', 1024, -1, 0, 0, 64, 1, '{}', '{"decode_tokens_per_s": 3}', 3, NULL,
  '0.2.0', 'host', '2026-01-01T00:00:00Z');
INSERT INTO runs VALUES (2, 'k', 'real', 'oneplus12', 'h', 'bamboo-7b', 'generated', '',
  'powerinfer2', '', 1024, -1, 0, 0, 64, 1, '{}', '{"decode_tokens_per_s": 2}', 2, 1,
  '0.2.0', 'host', '2026-01-01T00:00:00Z');
PRAGMA user_version = 1;)sql";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = ResultsDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->schema_version(), ResultsDb::kSchemaVersion);
  auto rows = (*db)->ReadRuns();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].linked_run, 1);
  EXPECT_DOUBLE_EQ((*rows)[0].decode_tokens_per_s, 3);
  EXPECT_TRUE((*rows)[0].token_latency_ms.empty());
}

class Merge : public ::testing::Test {
 protected:
  // Writes `rows` into a fresh database named `name`; returns its path.
  std::string Shard(const std::string& name, const std::vector<RunRow>& rows) {
    const std::string path = FreshDbPath(name);
    auto db = ResultsDb::Open(path);
    EXPECT_TRUE(db.ok());
    for (const RunRow& r : rows) EXPECT_TRUE((*db)->Insert(r).ok());
    return path;
  }
  std::unique_ptr<ResultsDb> Out() { return *ResultsDb::Open(FreshDbPath("merged.db")); }
};

TEST_F(Merge, CopiesNewRunsAndSkipsIdenticalOnes) {
  const std::string a = Shard("a.db", {Row(1), Row(2)});
  const std::string b = Shard("b.db", {Row(2), Row(3)});
  auto out = Out();
  absl::StatusOr<MergeStats> stats = MergeDatabases(*out, {a, b}, false);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->copied, 3);
  EXPECT_EQ(stats->identical, 1);
  EXPECT_EQ(*out->CountRuns(), 3);
}

TEST_F(Merge, ConflictingResultsAreRefusedAndNothingIsWritten) {
  RunRow different = Row(2);
  different.figures_json = R"({"decode_tokens_per_s": 11})";
  const std::string a = Shard("a.db", {Row(1), Row(2)});
  const std::string b = Shard("b.db", {Row(5), different});
  auto out = Out();
  absl::StatusOr<MergeStats> stats = MergeDatabases(*out, {a, b}, false);
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsAlreadyExists(stats.status()));
  EXPECT_NE(stats.status().message().find("b.db"), std::string::npos);
  EXPECT_NE(stats.status().message().find("--keep-both"), std::string::npos);
  EXPECT_EQ(*out->CountRuns(), 0);

  stats = MergeDatabases(*out, {a, b}, true);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->kept_both, 1);
  auto rows = out->ReadRuns();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ(rows->back().origin, "b.db");
  EXPECT_DOUBLE_EQ(rows->back().decode_tokens_per_s, 10);
}

TEST_F(Merge, LinksFromMeasurementToPredictionFollowTheRows) {
  const std::string path = FreshDbPath("replays.db");
  {
    auto db = ResultsDb::Open(path);
    ASSERT_TRUE((*db)->Insert(Row(7)).ok());
    const int64_t predicted = *(*db)->Insert(Row(8));
    RunRow real = Row(8);
    real.mode = "real";
    real.linked_run = predicted;
    ASSERT_TRUE((*db)->Insert(real).ok());
  }
  auto out = Out();
  ASSERT_TRUE(out->Insert(Row(100)).ok());  // shifts every id
  ASSERT_TRUE(MergeDatabases(*out, {path}, false).ok());
  auto rows = out->ReadRuns();
  ASSERT_EQ(rows->size(), 4u);
  const RunRow& real = rows->back();
  EXPECT_EQ(real.mode, "real");
  ASSERT_GT(real.linked_run, 0);
  EXPECT_EQ((*rows)[real.linked_run - 1].config.Key(), Row(8).config.Key());
  EXPECT_EQ((*rows)[real.linked_run - 1].mode, "simulated");
}

TEST_F(Merge, AMissingInputIsNamed) {
  auto out = Out();
  absl::StatusOr<MergeStats> stats = MergeDatabases(*out, {"/nonexistent/x.db"}, false);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("/nonexistent/x.db"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash
