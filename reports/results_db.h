// The results store: one SQLite file per study, one row per run in `runs` with
// the full configuration, the mode (simulated or real), the figures of
// `simulate --json`, the sparseflash version, host and time. The schema carries a
// version (PRAGMA user_version) and is migrated forward on open. Every write is
// one transaction; WAL mode and a busy timeout let several processes write the
// same file, each waiting for the others. A configuration is stored at most once
// per mode (its key is a stable hash of the configuration text).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct sqlite3;

namespace sparseflash {

struct RunConfig {
  std::string device, device_hash, model, trace, trace_hash, strategy, policy;
  int64_t memory_bytes = -1;
  double ffn_resident = -1;
  int threads = 0, prompt_tokens = 0;
  uint64_t tokens = 0, seed = 1;
  std::string options_json = "{}";

  // A stable text of every field, and its StableHash64 in hex.
  std::string CanonicalText() const;
  std::string Key() const;
};

struct RunRow {
  RunConfig config;
  std::string mode = "simulated";  // simulated | real
  std::string figures_json;        // the `simulate --json` object
  double decode_tokens_per_s = 0;
  int64_t linked_run = 0;  // a replay's measured run links its prediction
};

class ResultsDb {
 public:
  static constexpr int kSchemaVersion = 1;

  // Opens or creates `path`, migrating older schemas; errors name the file.
  static absl::StatusOr<std::unique_ptr<ResultsDb>> Open(const std::string& path);
  ~ResultsDb();

  // Inserts a run in one transaction; fails if its (key, mode) is present.
  absl::StatusOr<int64_t> Insert(const RunRow& row);
  absl::StatusOr<bool> Has(const std::string& key, const std::string& mode);
  absl::StatusOr<int64_t> CountRuns();
  int schema_version() const { return version_; }

 private:
  ResultsDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status Exec(const std::string& sql);
  absl::Status Error(const std::string& what) const;
  absl::Status Migrate();

  sqlite3* db_;
  std::string path_;
  int version_ = 0;
};

// The version string of this build and a short host description.
std::string SparseflashVersion();
std::string HostName();

}  // namespace sparseflash
