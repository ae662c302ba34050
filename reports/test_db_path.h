// Tests: a path in the test's scratch folder for a new SQLite database, with
// any database (and its -wal, -shm files) left there by an earlier run removed.
// The folder is the running test's own, so test programs that run at the same
// time (ctest -j) never share a database; the file keeps its name.
#pragma once

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace sparseflash {

inline std::string FreshDbPath(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir();
  if (test != nullptr) {
    dir += std::string("/") + test->test_suite_name() + "." + test->name();
    std::filesystem::create_directories(dir);
  }
  const std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

}  // namespace sparseflash
