#include "engine/real/proc_stats.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace sparseflash {
namespace {

TEST(ProcFieldBytes, ReadsAKilobyteFieldAndSaysWhenItIsMissing) {
  const std::string path = ::testing::TempDir() + "/smaps_rollup";
  {
    std::ofstream out(path);
    out << "Rss:              123456 kB\nAnonHugePages:     10240 kB\nSwap: 0 kB\n";
  }
  EXPECT_EQ(ProcFieldBytes(path, "AnonHugePages"), 10240 * 1024);
  EXPECT_EQ(ProcFieldBytes(path, "Rss"), 123456 * 1024);
  EXPECT_EQ(ProcFieldBytes(path, "Pss"), -1);
  EXPECT_EQ(ProcFieldBytes(path + ".absent", "Rss"), -1);
}

// On Linux the process's own figures are there and consistent: the peak is at
// least the current resident set, which holds at least this test's code.
TEST(ProcessStatusBytes, ReadsThisProcesssResidentSet) {
  const int64_t rss = ProcessStatusBytes("VmRSS");
  if (rss < 0) GTEST_SKIP() << "no /proc/self/status here";
  EXPECT_GT(rss, 0);
  EXPECT_GE(PeakRssBytes(), rss);
  EXPECT_EQ(ProcessStatusBytes("NoSuchField"), -1);
}

}  // namespace
}  // namespace sparseflash
