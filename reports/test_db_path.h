// Tests: a path in the test's scratch folder for a new SQLite database, with
// any database (and its -wal, -shm files) left there by an earlier run removed.
#pragma once

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace sparseflash {

inline std::string FreshDbPath(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

}  // namespace sparseflash
