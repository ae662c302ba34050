#include "reports/results_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/hash.h"
#include "nlohmann/json.hpp"

namespace sparseflash {
namespace {

// Forward migrations: entry i takes the schema from version i to i + 1.
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  config_key TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('simulated', 'real')),
  device TEXT NOT NULL, device_hash TEXT NOT NULL,
  model TEXT NOT NULL,
  trace TEXT NOT NULL, trace_hash TEXT NOT NULL,
  strategy TEXT NOT NULL, policy TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL, ffn_resident REAL NOT NULL,
  threads INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
  tokens INTEGER NOT NULL, seed INTEGER NOT NULL,
  options TEXT NOT NULL,
  figures TEXT NOT NULL,
  decode_tokens_per_s REAL NOT NULL,
  linked_run INTEGER REFERENCES runs(id),
  version TEXT NOT NULL, host TEXT NOT NULL, created_at TEXT NOT NULL,
  UNIQUE (config_key, mode)
);
CREATE INDEX runs_by_model ON runs (device, model, strategy);
)sql",
    // v2: per-token latencies, and the origin of a merged run that differs from a
    // stored run of the same configuration (part of the uniqueness key).
    R"sql(
CREATE TABLE runs_v2 (
  id INTEGER PRIMARY KEY,
  config_key TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('simulated', 'real')),
  device TEXT NOT NULL, device_hash TEXT NOT NULL,
  model TEXT NOT NULL,
  trace TEXT NOT NULL, trace_hash TEXT NOT NULL,
  strategy TEXT NOT NULL, policy TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL, ffn_resident REAL NOT NULL,
  threads INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
  tokens INTEGER NOT NULL, seed INTEGER NOT NULL,
  options TEXT NOT NULL,
  figures TEXT NOT NULL,
  decode_tokens_per_s REAL NOT NULL,
  linked_run INTEGER REFERENCES runs(id),
  version TEXT NOT NULL, host TEXT NOT NULL, created_at TEXT NOT NULL,
  token_latency_ms TEXT NOT NULL DEFAULT '[]',
  origin TEXT NOT NULL DEFAULT '',
  UNIQUE (config_key, mode, origin)
);
INSERT INTO runs_v2 SELECT *, '[]', '' FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
CREATE INDEX runs_by_model ON runs (device, model, strategy);
)sql",
    // v3: results of `validate`, one row per catalog entry (the latest run).
    R"sql(
CREATE TABLE validation (
  entry TEXT PRIMARY KEY,
  grp TEXT NOT NULL, source TEXT NOT NULL, tag TEXT NOT NULL, metric TEXT NOT NULL,
  published REAL NOT NULL, simulated REAL NOT NULL, error REAL NOT NULL,
  tolerance REAL NOT NULL, detail TEXT NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  version TEXT NOT NULL, created_at TEXT NOT NULL
);
)sql",
    // v4: why a validation result is outside its tolerance (the catalog's known_miss).
    R"sql(
ALTER TABLE validation ADD COLUMN known_miss TEXT NOT NULL DEFAULT '';
)sql",
};

constexpr char kColumns[] =
    "config_key, mode, device, device_hash, model, trace, trace_hash, strategy, policy, "
    "memory_bytes, ffn_resident, threads, prompt_tokens, tokens, seed, options, figures, "
    "decode_tokens_per_s, linked_run, version, host, created_at, token_latency_ms, origin";

std::string LatenciesToJson(const std::vector<double>& ms) {
  nlohmann::json j = nlohmann::json::array();
  for (double v : ms) j.push_back(std::round(v * 1e4) / 1e4);
  return j.dump();
}

std::vector<double> LatenciesFromJson(const char* text) {
  std::vector<double> out;
  nlohmann::json j = nlohmann::json::parse(text ? text : "[]", nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_number()) out.push_back(v.get<double>());
  }
  return out;
}

std::string ColumnText(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

std::string Now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string RunConfig::CanonicalText() const {
  // A trace file counts by its content, wherever it lies (shards on other machines).
  return absl::StrCat("device=", device, "|device_hash=", device_hash, "|model=", model,
                      "|trace=", trace_hash.empty() ? trace : "file", "|trace_hash=", trace_hash,
                      "|strategy=", strategy, "|policy=", policy, "|memory=", memory_bytes,
                      "|ffn_resident=", absl::StrFormat("%.6f", ffn_resident), "|threads=", threads,
                      "|prompt=", prompt_tokens, "|tokens=", tokens, "|seed=", seed,
                      "|options=", options_json);
}

std::string RunConfig::Key() const {
  return absl::StrFormat("%016x", StableHash64(CanonicalText()));
}

std::string SparseflashVersion() { return "0.4.0"; }

std::string HostName() {
  char host[256] = "unknown";
  gethostname(host, sizeof host);
  return host;
}

absl::StatusOr<std::unique_ptr<ResultsDb>> ResultsDb::OpenRaw(const std::string& path, int flags) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; expected a results database file"));
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    return absl::UnavailableError(absl::StrCat(path, ": cannot open results database: ", msg));
  }
  std::unique_ptr<ResultsDb> db(new ResultsDb(raw, path));
  sqlite3_busy_timeout(raw, 60000);  // writers wait for each other
  return db;
}

absl::StatusOr<int> ResultsDb::CheckIdentity() {
  auto not_ours = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": not a sparseflash results database (", why, ")"));
  };
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st,
                         nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return not_ours(sqlite3_errmsg(db_));
  }
  int tables = 0;
  bool has_runs = false;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++tables;
    has_runs |= ColumnText(st, 0) == "runs";
  }
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &st, nullptr);
  const int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  if (version == 0 && tables > 0) return not_ours("it has tables but no sparseflash schema");
  if (version > 0 && !has_runs) return not_ours("no runs table");
  return version;
}

absl::StatusOr<std::unique_ptr<ResultsDb>> ResultsDb::OpenForReading(const std::string& path) {
  if (!PathExists(path)) return absl::NotFoundError(path + ": no such results database");
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = OpenRaw(path, SQLITE_OPEN_READONLY);
  if (!db.ok()) return db.status();
  absl::StatusOr<int> version = (*db)->CheckIdentity();
  if (!version.ok()) return version.status();
  constexpr int kKnown = sizeof(kMigrations) / sizeof(kMigrations[0]);
  if (*version == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a sparseflash results database (empty)"));
  }
  if (*version != kKnown) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": schema version ", *version, ", this sparseflash reads version ", kKnown,
        *version < kKnown ? "; a writing command (sweep, simulate --db, db merge) migrates it"
                          : "; use a newer build"));
  }
  (*db)->version_ = *version;
  return db;
}

absl::StatusOr<std::unique_ptr<ResultsDb>> ResultsDb::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> opened =
      OpenRaw(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<ResultsDb> db = *std::move(opened);
  // Identify the file before changing anything in it (WAL mode is persistent).
  if (absl::StatusOr<int> version = db->CheckIdentity(); !version.ok()) return version.status();
  if (absl::Status s = db->Exec("PRAGMA journal_mode=WAL"); !s.ok()) return s;
  // Migrations rebuild tables, which SQLite asks to do with foreign keys off.
  if (absl::Status s = db->Migrate(); !s.ok()) return s;
  if (absl::Status s = db->Exec("PRAGMA foreign_keys=ON"); !s.ok()) return s;
  return db;
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

absl::Status ResultsDb::Error(const std::string& what) const {
  return absl::InternalError(absl::StrCat(path_, ": ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status ResultsDb::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(absl::StrCat(path_, ": ", msg));
  }
  return absl::OkStatus();
}

absl::Status ResultsDb::Migrate() {
  if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &st, nullptr);
  version_ = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  constexpr int kKnown = sizeof(kMigrations) / sizeof(kMigrations[0]);
  if (version_ > kKnown) {
    Exec("ROLLBACK").IgnoreError();  // the first error is the one to report
    return absl::FailedPreconditionError(absl::StrCat(path_, ": schema version ", version_,
                                                      " is newer than this sparseflash (", kKnown,
                                                      "); use a newer build"));
  }
  for (; version_ < kKnown; ++version_) {
    if (absl::Status s = Exec(kMigrations[version_]); !s.ok()) {
      Exec("ROLLBACK").IgnoreError();  // the first error is the one to report
      return s;
    }
    if (absl::Status s = Exec(absl::StrCat("PRAGMA user_version = ", version_ + 1)); !s.ok()) {
      Exec("ROLLBACK").IgnoreError();  // the first error is the one to report
      return s;
    }
  }
  return Exec("COMMIT");
}

absl::Status ResultsDb::InTransaction(const std::function<absl::Status()>& body) {
  if (in_transaction_) return body();
  if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  in_transaction_ = true;
  absl::Status result = body();
  in_transaction_ = false;
  if (!result.ok()) {
    Exec("ROLLBACK").IgnoreError();  // the first error is the one to report
    return result;
  }
  return Exec("COMMIT");
}

absl::StatusOr<int64_t> ResultsDb::Insert(const RunRow& r) {
  int64_t id = 0;
  absl::Status s = InTransaction([&]() -> absl::Status {
    absl::StatusOr<int64_t> inserted = InsertRow(r);
    if (!inserted.ok()) return inserted.status();
    id = *inserted;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return id;
}

absl::StatusOr<bool> ResultsDb::HasFigures(const RunRow& r) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(
          db_, "SELECT 1 FROM runs WHERE config_key = ? AND mode = ? AND figures = ? LIMIT 1", -1,
          &st, nullptr) != SQLITE_OK) {
    return Error("prepare lookup");
  }
  const std::string key = r.config.Key();
  sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, r.mode.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, r.figures_json.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("look up run");
  return rc == SQLITE_ROW;
}

absl::StatusOr<int64_t> ResultsDb::InsertMeasurement(RunRow row) {
  absl::StatusOr<bool> same = HasFigures(row);
  if (!same.ok()) return same.status();
  if (*same) {
    return absl::AlreadyExistsError(absl::StrCat(path_, ": run ", row.config.Key(), " (", row.mode,
                                                 ") is already stored with these figures"));
  }
  const std::string origin = row.origin;
  constexpr int kMostRepeats = 100000;
  for (int n = 1; n <= kMostRepeats; ++n) {
    if (n > 1) {
      row.origin = absl::StrCat(origin, origin.empty() ? "" : ", ", "measurement ", n);
    }
    absl::StatusOr<int64_t> id = Insert(row);
    if (!absl::IsAlreadyExists(id.status())) return id;
  }
  return absl::ResourceExhaustedError(absl::StrCat(path_, ": run ", row.config.Key(), " has ",
                                                   kMostRepeats, " measurements stored already"));
}

absl::StatusOr<int64_t> ResultsDb::InsertRow(const RunRow& r) {
  static const std::string kSql =
      absl::StrCat("INSERT INTO runs (", kColumns,
                   ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                   "?,?,?)");
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, kSql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return Error("prepare insert");
  }
  const RunConfig& c = r.config;
  int i = 0;
  auto text = [&](const std::string& v) {
    sqlite3_bind_text(st, ++i, v.c_str(), -1, SQLITE_TRANSIENT);
  };
  text(c.Key());
  text(r.mode);
  text(c.device);
  text(c.device_hash);
  text(c.model);
  text(c.trace);
  text(c.trace_hash);
  text(c.strategy);
  text(c.policy);
  sqlite3_bind_int64(st, ++i, c.memory_bytes);
  sqlite3_bind_double(st, ++i, c.ffn_resident);
  sqlite3_bind_int(st, ++i, c.threads);
  sqlite3_bind_int(st, ++i, c.prompt_tokens);
  sqlite3_bind_int64(st, ++i, static_cast<int64_t>(c.tokens));
  sqlite3_bind_int64(st, ++i, static_cast<int64_t>(c.seed));
  text(c.options_json);
  text(r.figures_json);
  sqlite3_bind_double(st, ++i, r.decode_tokens_per_s);
  if (r.linked_run > 0) {
    sqlite3_bind_int64(st, ++i, r.linked_run);
  } else {
    sqlite3_bind_null(st, ++i);
  }
  text(r.version.empty() ? SparseflashVersion() : r.version);
  text(r.host.empty() ? HostName() : r.host);
  text(r.created_at.empty() ? Now() : r.created_at);
  text(LatenciesToJson(r.token_latency_ms));
  text(r.origin);
  const int rc = sqlite3_step(st);
  // Only the uniqueness of (configuration, mode, origin) means "stored before".
  const bool stored = sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE;
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return stored ? absl::AlreadyExistsError(
                        absl::StrCat(path_, ": run ", c.Key(), " (", r.mode, ") is already stored"))
                  : Error("insert run");
  }
  return sqlite3_last_insert_rowid(db_);
}

absl::StatusOr<std::vector<RunRow>> ResultsDb::ReadRuns() {
  const std::string sql = absl::StrCat("SELECT id, ", kColumns, " FROM runs ORDER BY id");
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return Error("prepare read");
  }
  std::vector<RunRow> rows;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    RunRow r;
    RunConfig& c = r.config;
    int i = 0;
    r.id = sqlite3_column_int64(st, i++);
    ++i;  // config_key: recomputed from the configuration
    r.mode = ColumnText(st, i++);
    c.device = ColumnText(st, i++);
    c.device_hash = ColumnText(st, i++);
    c.model = ColumnText(st, i++);
    c.trace = ColumnText(st, i++);
    c.trace_hash = ColumnText(st, i++);
    c.strategy = ColumnText(st, i++);
    c.policy = ColumnText(st, i++);
    c.memory_bytes = sqlite3_column_int64(st, i++);
    c.ffn_resident = sqlite3_column_double(st, i++);
    c.threads = sqlite3_column_int(st, i++);
    c.prompt_tokens = sqlite3_column_int(st, i++);
    c.tokens = static_cast<uint64_t>(sqlite3_column_int64(st, i++));
    c.seed = static_cast<uint64_t>(sqlite3_column_int64(st, i++));
    c.options_json = ColumnText(st, i++);
    r.figures_json = ColumnText(st, i++);
    r.decode_tokens_per_s = sqlite3_column_double(st, i++);
    r.linked_run = sqlite3_column_int64(st, i++);
    r.version = ColumnText(st, i++);
    r.host = ColumnText(st, i++);
    r.created_at = ColumnText(st, i++);
    r.token_latency_ms =
        LatenciesFromJson(reinterpret_cast<const char*>(sqlite3_column_text(st, i++)));
    r.origin = ColumnText(st, i++);
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return Error("read runs");
  return rows;
}

absl::StatusOr<bool> ResultsDb::Has(const std::string& key, const std::string& mode) {
  absl::StatusOr<int64_t> id = Find(key, mode);
  if (!id.ok()) return id.status();
  return *id > 0;
}

absl::StatusOr<int64_t> ResultsDb::Find(const std::string& key, const std::string& mode) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT id FROM runs WHERE config_key = ? AND mode = ? ORDER BY origin "
                         "LIMIT 1",
                         -1, &st, nullptr) != SQLITE_OK) {
    return Error("prepare lookup");
  }
  sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, mode.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st);
  const int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("look up run");
  return id;
}

absl::StatusOr<int64_t> ResultsDb::CountRuns() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM runs", -1, &st, nullptr) != SQLITE_OK) {
    return Error("prepare count");
  }
  const int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  return n;
}

}  // namespace sparseflash
