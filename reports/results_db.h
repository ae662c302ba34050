// The results store: one SQLite file per study, one row per run in `runs` with
// the full configuration, the mode (simulated or real), the figures of
// `simulate --json`, the sparseflash version, host and time. The schema carries a
// version (PRAGMA user_version) and is migrated forward on open. Every write is
// one transaction; WAL mode and a busy timeout let several processes write the
// same file, each waiting for the others. A configuration is stored at most once
// per mode (its key is a stable hash of the configuration text); a merge may keep
// a second, different result of one configuration under its origin.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

  // A stable text of every field (a trace file by its hash, not its path), and
  // its StableHash64 in hex.
  std::string CanonicalText() const;
  std::string Key() const;
};

struct RunRow {
  RunConfig config;
  std::string mode = "simulated";  // simulated | real
  std::string figures_json;        // the `simulate --json` object
  double decode_tokens_per_s = 0;
  std::vector<double> token_latency_ms;  // per decode token, in order
  int64_t linked_run = 0;                // a replay's measured run links its prediction
  // "" for a run made here; a merged run that differs from a stored one with the
  // same configuration keeps the name of the database it came from.
  std::string origin;
  // Set when read back: the row id and where and when the run was made.
  int64_t id = 0;
  std::string version, host, created_at;
};

// One entry of a validation run: a published figure against the simulator's.
struct ValidationRow {
  std::string entry, group, source, tag, metric, detail;
  std::string known_miss;  // why the result is outside its tolerance, as the catalog says
  double published = 0, simulated = 0, error = 0, tolerance = 0;
  int64_t run_id = 0;               // the simulated run behind it (0 for trace statistics)
  std::string version, created_at;  // set when read back (written: this build, now)
};

class ResultsDb {
 public:
  static constexpr int kSchemaVersion = 4;

  // Opens or creates `path` for writing, migrating older schemas. An existing
  // file that is not a sparseflash results database is refused untouched.
  // Errors name the file.
  static absl::StatusOr<std::unique_ptr<ResultsDb>> Open(const std::string& path);
  // Opens an existing database for reading only: nothing is created, migrated
  // or switched to WAL; a missing, empty, foreign or older file is an error.
  static absl::StatusOr<std::unique_ptr<ResultsDb>> OpenForReading(const std::string& path);
  ~ResultsDb();

  // Inserts a run in one transaction (or the enclosing InTransaction); fails
  // with AlreadyExists if its (key, mode, origin) is present.
  absl::StatusOr<int64_t> Insert(const RunRow& row);
  // Inserts a measured run (mode "real"). Measurements repeat: one of a
  // configuration and origin stored before is stored as its n-th measurement
  // (origin "measurement n", after the given origin if any), not refused. The
  // same measurement again (the configuration's stored figures, identical) is
  // refused as AlreadyExists: a result file imported twice.
  absl::StatusOr<int64_t> InsertMeasurement(RunRow row);
  absl::StatusOr<bool> Has(const std::string& key, const std::string& mode);
  // The id of the run made here with this key and mode; 0 when there is none.
  absl::StatusOr<int64_t> Find(const std::string& key, const std::string& mode);
  absl::StatusOr<int64_t> CountRuns();
  // Every run, in id order.
  absl::StatusOr<std::vector<RunRow>> ReadRuns();
  // Stores a validation result, replacing an earlier one of the same entry.
  absl::Status PutValidation(const ValidationRow& row);
  // Every validation result, in entry order of storing.
  absl::StatusOr<std::vector<ValidationRow>> ReadValidation();
  // Runs under one transaction: `body` commits when it returns OK, otherwise
  // nothing it wrote stays.
  absl::Status InTransaction(const std::function<absl::Status()>& body);
  const std::string& path() const { return path_; }
  int schema_version() const { return version_; }

 private:
  ResultsDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  static absl::StatusOr<std::unique_ptr<ResultsDb>> OpenRaw(const std::string& path, int flags);
  // The file's schema version; an error for a file that is not ours.
  absl::StatusOr<int> CheckIdentity();
  absl::Status Exec(const std::string& sql);
  absl::Status Error(const std::string& what) const;
  absl::Status Migrate();
  absl::StatusOr<int64_t> InsertRow(const RunRow& row);
  // Whether a run of this configuration and mode has exactly these figures.
  absl::StatusOr<bool> HasFigures(const RunRow& row);

  bool in_transaction_ = false;

  sqlite3* db_;
  std::string path_;
  int version_ = 0;
};

// The version string of this build and a short host description.
std::string SparseflashVersion();
std::string HostName();

}  // namespace sparseflash
