// The validation table of the results database (schema v3; known_miss since v4).
#include <sqlite3.h>

#include <ctime>

#include "absl/strings/str_cat.h"
#include "reports/results_db.h"

namespace sparseflash {
namespace {

std::string NowUtc() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string Text(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

absl::Status ResultsDb::PutValidation(const ValidationRow& v) {
  static constexpr char kSql[] =
      "INSERT OR REPLACE INTO validation (entry, grp, source, tag, metric, published, simulated, "
      "error, tolerance, detail, run_id, version, created_at, known_miss) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  return InTransaction([&]() -> absl::Status {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, kSql, -1, &st, nullptr) != SQLITE_OK) {
      return Error("prepare validation insert");
    }
    int i = 0;
    for (const std::string* s : {&v.entry, &v.group, &v.source, &v.tag, &v.metric}) {
      sqlite3_bind_text(st, ++i, s->c_str(), -1, SQLITE_TRANSIENT);
    }
    for (double d : {v.published, v.simulated, v.error, v.tolerance}) {
      sqlite3_bind_double(st, ++i, d);
    }
    sqlite3_bind_text(st, ++i, v.detail.c_str(), -1, SQLITE_TRANSIENT);
    if (v.run_id > 0) {
      sqlite3_bind_int64(st, ++i, v.run_id);
    } else {
      sqlite3_bind_null(st, ++i);
    }
    const std::string version = SparseflashVersion(), now = NowUtc();
    sqlite3_bind_text(st, ++i, version.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, ++i, now.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, ++i, v.known_miss.c_str(), -1, SQLITE_TRANSIENT);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? absl::OkStatus() : Error("insert validation result");
  });
}

absl::StatusOr<std::vector<ValidationRow>> ResultsDb::ReadValidation() {
  static constexpr char kSql[] =
      "SELECT entry, grp, source, tag, metric, published, simulated, error, tolerance, detail, "
      "run_id, version, created_at, known_miss FROM validation ORDER BY rowid";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, kSql, -1, &st, nullptr) != SQLITE_OK) {
    return Error("prepare validation read");
  }
  std::vector<ValidationRow> out;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    ValidationRow v{.entry = Text(st, 0),
                    .group = Text(st, 1),
                    .source = Text(st, 2),
                    .tag = Text(st, 3),
                    .metric = Text(st, 4),
                    .detail = Text(st, 9),
                    .known_miss = Text(st, 13),
                    .published = sqlite3_column_double(st, 5),
                    .simulated = sqlite3_column_double(st, 6),
                    .error = sqlite3_column_double(st, 7),
                    .tolerance = sqlite3_column_double(st, 8),
                    .run_id = sqlite3_column_int64(st, 10),
                    .version = Text(st, 11),
                    .created_at = Text(st, 12)};
    out.push_back(std::move(v));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return Error("read validation");
  return out;
}

}  // namespace sparseflash
