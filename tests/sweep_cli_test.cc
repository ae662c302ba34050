// The sweep workflow through the command line: a sweep killed with SIGKILL at
// several moments finishes when run again with every configuration stored
// exactly once, and shards merged with `db merge` equal the whole sweep.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reports/results_db.h"
#include "reports/test_stored_runs.h"
#include "tests/cli_runner.h"

namespace sparseflash {
namespace {

constexpr char kSweep[] = R"pb(
  name: "kill-test"
  tokens: 24
  grid {
    device: [ "oneplus12", "oneplus-ace2" ]
    model: "turbosparse-mistral-7b"
    strategy: [ "powerinfer2", "llmflash", "llamacpp" ]
    memory_fraction: [ 0.45, 0.55, 0.65, 0.75, 0.85, 0.95 ]
  }
)pb";
constexpr int kConfigurations = 2 * 3 * 6;

std::string Fresh(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

std::string WriteSweep() {
  const std::string path = ::testing::TempDir() + "/kill_sweep.textproto";
  std::ofstream(path) << kSweep;
  return path;
}

pid_t Spawn(const std::vector<std::string>& args) { return testing::SpawnCli(args); }

int Wait(pid_t pid) { return testing::WaitCli(pid); }

// Rows in the database, read with plain SQLite (no migration, no writes).
int64_t StoredRuns(const std::string& db) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return 0;
  }
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_stmt* st = nullptr;
  int64_t n = 0;
  if (sqlite3_prepare_v2(raw, "SELECT COUNT(*) FROM runs", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return n;
}

std::vector<std::string> SweepArgs(const std::string& config, const std::string& db) {
  return {"sweep", "--config", config, "--db", db, "--jobs", "2"};
}

TEST(SweepCli, KilledSweepsResumeWithEveryConfigurationOnce) {
  const std::string config = WriteSweep(), db = Fresh("killed.db");
  // Kill after 0 (possibly while creating the database), 3 and 12 stored runs.
  for (int64_t kill_after : {0, 3, 12}) {
    pid_t pid = Spawn(SweepArgs(config, db));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (StoredRuns(db) < kill_after && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill(pid, SIGKILL);
    EXPECT_EQ(Wait(pid), 128 + SIGKILL);
    EXPECT_LT(StoredRuns(db), kConfigurations) << "the sweep finished before it was killed";
  }
  ASSERT_EQ(Wait(Spawn(SweepArgs(config, db))), 0);
  auto results = ResultsDb::Open(db);
  ASSERT_TRUE(results.ok()) << results.status();
  auto rows = (*results)->ReadRuns();
  ASSERT_TRUE(rows.ok());
  std::set<std::string> keys;
  for (const RunRow& r : *rows) {
    keys.insert(r.config.Key());
    EXPECT_GT(r.decode_tokens_per_s, 0);
    EXPECT_EQ(r.token_latency_ms.size(), 24u);
  }
  EXPECT_EQ(rows->size(), static_cast<size_t>(kConfigurations));
  EXPECT_EQ(keys.size(), static_cast<size_t>(kConfigurations));
}

TEST(SweepCli, MergedShardsEqualTheWholeSweep) {
  const std::string config = WriteSweep();
  std::vector<std::string> shards;
  for (int k = 1; k <= 3; ++k) {
    shards.push_back(Fresh(absl::StrCat("shard", k, ".db")));
    std::vector<std::string> args = SweepArgs(config, shards.back());
    args.push_back("--shard");
    args.push_back(absl::StrCat(k, "/3"));
    ASSERT_EQ(Wait(Spawn(args)), 0);
    EXPECT_EQ(StoredRuns(shards.back()), kConfigurations / 3);
  }
  const std::string merged = Fresh("merged_shards.db");
  std::vector<std::string> merge = {"db", "merge", merged};
  merge.insert(merge.end(), shards.begin(), shards.end());
  ASSERT_EQ(Wait(Spawn(merge)), 0);
  EXPECT_EQ(StoredRuns(merged), kConfigurations);
  // Merging a shard again changes nothing: its runs are identical.
  ASSERT_EQ(Wait(Spawn({"db", "merge", merged, shards[0]})), 0);
  EXPECT_EQ(StoredRuns(merged), kConfigurations);
  // Running the whole sweep on the merged database has nothing left to do.
  ASSERT_EQ(Wait(Spawn(SweepArgs(config, merged))), 0);
  EXPECT_EQ(StoredRuns(merged), kConfigurations);
}

// A sweep over a trace file decodes it once and shares it among its runs, and
// counts an offline profile from a file once; each run stores what `simulate
// --trace` (`--profile`) of the same configuration stores (the same key, the
// same figures), for a planner's strategy, Belady's oracle and llama.cpp.
TEST(SweepCli, RunsOnATraceFileAsSimulateDoes) {
  // Paths spelled as the sweep resolves them (the stored result names the profile file).
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()).lexically_normal();
  const std::string trace = (dir / "sweep_file.trace").string();
  const std::string profile = (dir / "sweep_profile.trace").string();
  for (const auto& [path, seed] : {std::pair{trace, "3"}, std::pair{profile, "4"}}) {
    ASSERT_EQ(Wait(Spawn({"trace", "gen", "--model", "tinystories-relu-260k", "--tokens", "12",
                          "--seed", seed, "--out", path, "--force"})),
              0);
  }
  const std::string config = (dir / "file_sweep.textproto").string();
  std::ofstream(config) << R"pb(
    name: "file-sweep"
    tokens: 12
    grid {
      device: "oneplus12"
      model: "tinystories-relu-260k"
      trace { file: "sweep_file.trace" }
      strategy: [ "powerinfer2", "llmflash", "llamacpp" ]
      ffn_resident: [ 0.5, 0.75 ]
    }
    grid {
      device: "oneplus12"
      model: "tinystories-relu-260k"
      trace { file: "sweep_file.trace" }
      strategy: "powerinfer2"
      policy: "belady"
      ffn_resident: [ 0.5, 0.75 ]
    }
    grid {
      device: "oneplus12"
      model: "tinystories-relu-260k"
      trace { file: "sweep_file.trace" }
      strategy: [ "powerinfer2", "llmflash" ]
      ffn_resident: [ 0.5, 0.75 ]
      profile: "sweep_profile.trace"
    }
  )pb";
  const std::string swept = Fresh("file_sweep.db");
  ASSERT_EQ(Wait(Spawn(SweepArgs(config, swept))), 0);
  const std::string simulated = Fresh("file_simulate.db");
  struct Run {
    const char* strategy;
    const char* policy;
    bool profiled;  // with the profile file
  };
  for (const Run& r : {Run{"powerinfer2", "", false}, Run{"llmflash", "", false},
                       Run{"llamacpp", "", false}, Run{"powerinfer2", "belady", false},
                       Run{"powerinfer2", "", true}, Run{"llmflash", "", true}}) {
    for (const char* share : {"0.5", "0.75"}) {
      std::vector<std::string> args = {
          "simulate", "--device", "oneplus12",  "--model",  "tinystories-relu-260k",
          "--trace",  trace,      "--strategy", r.strategy, "--ffn-resident",
          share,      "--tokens", "12",         "--db",     simulated};
      if (*r.policy != 0) args.insert(args.end(), {"--policy", r.policy});
      if (r.profiled) args.insert(args.end(), {"--profile", profile});
      ASSERT_EQ(Wait(Spawn(args)), 0) << r.strategy << " " << r.policy << " " << share;
    }
  }
  auto figures = [](const std::string& db) {
    std::map<std::string, std::string> by_key;
    for (const auto& [key, row] : StoredRunsByKey(db)) by_key[key] = row.figures_json;
    return by_key;
  };
  const std::map<std::string, std::string> from_sweep = figures(swept);
  const std::map<std::string, std::string> from_simulate = figures(simulated);
  EXPECT_EQ(from_sweep.size(), 12u);
  EXPECT_EQ(from_sweep, from_simulate);
}

// Runs that differ only in scheduling (threads, pipeline, cluster size, I/O
// depth, I/O threads) replay one run's classification of their neurons instead of
// classifying again; they store what they store when every run classifies for
// itself (--no-share), token by token, for dense and MoE models, powerinfer2
// and llmflash, the default and a set policy, with and without the NPU's rows.
TEST(SweepCli, SharedClassificationsStoreWhatEveryRunsOwnDoes) {
  const std::string config = ::testing::TempDir() + "/share_sweep.textproto";
  // Every grid over both models (MODELS).
  constexpr char kGrids[] = R"pb(
    name: "share-sweep"
    tokens: 10
    grid {
      device: [ "oneplus12", "oneplus-ace2" ] MODELS
      strategy: [ "powerinfer2", "llmflash" ]
      ffn_resident: [ 0.1, 0.5 ]
    }
    grid {
      device: [ "oneplus12", "oneplus-ace2" ] MODELS
      strategy: [ "powerinfer2", "llmflash" ]
      threads: [ 1, 3 ]
      ffn_resident: [ 0.1, 0.5 ]
    }
    grid {
      device: "oneplus12" MODELS
      strategy: "llmflash"
      option: "io_threads=8"
      ffn_resident: [ 0.1, 0.5 ]
    }
    grid {
      device: "oneplus12" MODELS
      strategy: "powerinfer2"
      option: [ "pipeline=none", "io_depth=4" ]
      ffn_resident: [ 0.1, 0.5 ]
    }
    grid {
      device: "oneplus12" MODELS
      strategy: "powerinfer2"
      policy: "s3fifo"
      threads: [ 0, 2 ]
      option: "cluster_neurons=32"
      ffn_resident: 0.25
    }
  )pb";
  std::ofstream(config) << absl::StrReplaceAll(
      kGrids, {{"MODELS", R"(model: [ "turbosparse-mistral-7b", "turbosparse-mixtral-47b" ])"}});
  // Per configuration key: the figures and the tokens' latencies.
  auto stored = [](const std::string& db) {
    std::map<std::string, std::pair<std::string, std::vector<double>>> by_key;
    for (const auto& [key, row] : StoredRunsByKey(db)) {
      by_key[key] = {row.figures_json, row.token_latency_ms};
    }
    return by_key;
  };
  const std::string shared = Fresh("shared.db"), own = Fresh("own.db");
  const testing::CliOutcome with = testing::Shell(testing::CliCommandLine(
      absl::StrCat("sweep --config ", config, " --db ", shared, " --jobs 2 2>/dev/null")));
  ASSERT_EQ(with.code, 0) << with.out;
  // Every key of the first grid records (its runs differ in more than
  // scheduling) and its runs in the next three replay: 22 of powerinfer2's,
  // 20 of llmflash's, less any that ran beside their key's recording run.
  const size_t phrase = with.out.find(" runs differed from another only in");
  ASSERT_NE(phrase, std::string::npos) << with.out;
  const size_t line = with.out.rfind('\n', phrase);
  const int replayed = std::atoi(with.out.substr(line == std::string::npos ? 0 : line + 1).c_str());
  EXPECT_GE(replayed, 36) << with.out;
  const testing::CliOutcome without = testing::Shell(testing::CliCommandLine(
      absl::StrCat("sweep --config ", config, " --db ", own, " --jobs 2 --no-share 2>/dev/null")));
  ASSERT_EQ(without.code, 0) << without.out;
  EXPECT_EQ(without.out.find("runs differed from another only in"), std::string::npos)
      << without.out;
  const auto a = stored(shared), b = stored(own);
  EXPECT_EQ(a.size(), 16u + 32u + 4u + 4u + 4u);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// A result says what was simulated: every option as the strategy resolved it
// (threads and policy included), the offline profile's source, and a run that
// names a default is the same configuration as one that leaves it out.
TEST(SimulateCli, ResultsCarryEveryOptionAsUsed) {
  const std::string db = Fresh("fidelity.db");
  const std::string dir = ::testing::TempDir();
  auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        "simulate",       "--device", "oneplus12", "--model", "tinystories-relu-260k",
        "--ffn-resident", "0.5",      "--tokens",  "8",       "--json",
        "--db",           db};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(Wait(testing::SpawnCli(args, dir + "/fidelity.err")), 0);
  };
  // The stored figures are the --json figures.
  run({"--threads", "2", "--policy", "fifo", "--option", "io_depth=16", "--profile", "oracle"});
  auto stored = ResultsDb::OpenForReading(db);
  ASSERT_TRUE(stored.ok()) << stored.status();
  auto rows = (*stored)->ReadRuns();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const nlohmann::json f = nlohmann::json::parse((*rows)[0].figures_json);
  EXPECT_EQ(f["options"]["threads"], "2");
  EXPECT_EQ(f["options"]["policy"], "fifo");
  EXPECT_EQ(f["options"]["io_depth"], "16");
  EXPECT_EQ(f["options"]["layout"], "bundle");  // a default, filled in
  EXPECT_EQ(f["profile"], "oracle");
  EXPECT_EQ((*rows)[0].config.threads, 2);
  EXPECT_EQ((*rows)[0].config.policy, "fifo");

  // Naming the defaults (lru, 4 threads on this phone) is the default configuration.
  const std::string db2 = Fresh("fidelity2.db");
  for (const auto& extra : {std::vector<std::string>{},
                            std::vector<std::string>{"--policy", "lru", "--threads", "4"}}) {
    std::vector<std::string> args = {"simulate",
                                     "--device",
                                     "oneplus12",
                                     "--model",
                                     "tinystories-relu-260k",
                                     "--ffn-resident",
                                     "0.5",
                                     "--tokens",
                                     "8",
                                     "--db",
                                     db2};
    args.insert(args.end(), extra.begin(), extra.end());
    Wait(testing::SpawnCli(args));
  }
  auto second = ResultsDb::OpenForReading(db2);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*(*second)->CountRuns(), 1);
}

}  // namespace
}  // namespace sparseflash
