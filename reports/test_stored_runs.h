// Tests: the runs a results database holds, by configuration key, for
// comparing what two ways of running the same configurations stored. A
// database that cannot be read fails the test and gives no runs.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "reports/results_db.h"

namespace sparseflash {

inline std::map<std::string, RunRow> StoredRunsByKey(const std::string& db) {
  std::map<std::string, RunRow> by_key;
  auto opened = ResultsDb::OpenForReading(db);
  EXPECT_TRUE(opened.ok()) << db << ": " << opened.status();
  if (!opened.ok()) return by_key;
  auto rows = (*opened)->ReadRuns();
  EXPECT_TRUE(rows.ok()) << db << ": " << rows.status();
  if (!rows.ok()) return by_key;
  for (RunRow& row : *rows) by_key[row.config.Key()] = std::move(row);
  return by_key;
}

}  // namespace sparseflash
