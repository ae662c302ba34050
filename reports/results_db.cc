#include "reports/results_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"

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
};

std::string Now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string RunConfig::CanonicalText() const {
  return absl::StrCat("device=", device, "|device_hash=", device_hash, "|model=", model,
                      "|trace=", trace, "|trace_hash=", trace_hash, "|strategy=", strategy,
                      "|policy=", policy, "|memory=", memory_bytes,
                      "|ffn_resident=", absl::StrFormat("%.6f", ffn_resident), "|threads=", threads,
                      "|prompt=", prompt_tokens, "|tokens=", tokens, "|seed=", seed,
                      "|options=", options_json);
}

std::string RunConfig::Key() const {
  return absl::StrFormat("%016x", StableHash64(CanonicalText()));
}

std::string SparseflashVersion() { return "0.3.0"; }

std::string HostName() {
  char host[256] = "unknown";
  gethostname(host, sizeof host);
  return host;
}

absl::StatusOr<std::unique_ptr<ResultsDb>> ResultsDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    return absl::UnavailableError(absl::StrCat(path, ": cannot open results database: ", msg));
  }
  std::unique_ptr<ResultsDb> db(new ResultsDb(raw, path));
  sqlite3_busy_timeout(raw, 60000);  // writers wait for each other
  if (absl::Status s = db->Exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;"); !s.ok()) {
    return s;
  }
  if (absl::Status s = db->Migrate(); !s.ok()) return s;
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
    Exec("ROLLBACK");
    return absl::FailedPreconditionError(absl::StrCat(path_, ": schema version ", version_,
                                                      " is newer than this sparseflash (", kKnown,
                                                      "); use a newer build"));
  }
  for (; version_ < kKnown; ++version_) {
    if (absl::Status s = Exec(kMigrations[version_]); !s.ok()) {
      Exec("ROLLBACK");
      return s;
    }
    if (absl::Status s = Exec(absl::StrCat("PRAGMA user_version = ", version_ + 1)); !s.ok()) {
      Exec("ROLLBACK");
      return s;
    }
  }
  return Exec("COMMIT");
}

absl::StatusOr<int64_t> ResultsDb::Insert(const RunRow& r) {
  static const char* kSql =
      "INSERT INTO runs (config_key, mode, device, device_hash, model, trace, trace_hash, "
      "strategy, policy, memory_bytes, ffn_resident, threads, prompt_tokens, tokens, seed, "
      "options, figures, decode_tokens_per_s, linked_run, version, host, created_at) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, kSql, -1, &st, nullptr) != SQLITE_OK) {
    Exec("ROLLBACK");
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
  text(SparseflashVersion());
  text(HostName());
  text(Now());
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    absl::Status err = rc == SQLITE_CONSTRAINT
                           ? absl::AlreadyExistsError(absl::StrCat(path_, ": run ", c.Key(), " (",
                                                                   r.mode, ") is already stored"))
                           : Error("insert run");
    Exec("ROLLBACK");
    return err;
  }
  const int64_t id = sqlite3_last_insert_rowid(db_);
  if (absl::Status s = Exec("COMMIT"); !s.ok()) return s;
  return id;
}

absl::StatusOr<bool> ResultsDb::Has(const std::string& key, const std::string& mode) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM runs WHERE config_key = ? AND mode = ?", -1, &st,
                         nullptr) != SQLITE_OK) {
    return Error("prepare lookup");
  }
  sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, mode.c_str(), -1, SQLITE_TRANSIENT);
  const bool found = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  return found;
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
