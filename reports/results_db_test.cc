#include "reports/results_db.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

std::string FreshPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

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
  const std::string path = FreshPath("runs.db");
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

TEST(ResultsDb, KeysAreStableAndDistinguishConfigurations) {
  EXPECT_EQ(Row(1).config.Key(), Row(1).config.Key());
  EXPECT_NE(Row(1).config.Key(), Row(2).config.Key());
  RunRow other = Row(1);
  other.config.options_json = R"({"window":"5"})";
  EXPECT_NE(other.config.Key(), Row(1).config.Key());
}

TEST(ResultsDb, ANewerSchemaIsRefused) {
  const std::string path = FreshPath("newer.db");
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
  const std::string path = FreshPath("shared.db");
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

}  // namespace
}  // namespace sparseflash
