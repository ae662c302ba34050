#include "engine/real/proc_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

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

TEST(StealSeconds, ReadsTheStealColumnOfTheCpuLine) {
  const std::string path = ::testing::TempDir() + "/stat";
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  {
    std::ofstream out(path);
    out << "cpu  3724579 17078 351896 967203 47636 0 6290 23527 0 0\n"
           "cpu0 1 2 3 4 5 6 7 8 0 0\n";
  }
  EXPECT_DOUBLE_EQ(StealSeconds(path), 23527 / hz);
  {
    std::ofstream out(path);
    out << "cpu  1 2 3 4\n";  // a kernel without the column
  }
  EXPECT_EQ(StealSeconds(path), -1);
  EXPECT_EQ(StealSeconds(path + ".absent"), -1);
}

}  // namespace
}  // namespace sparseflash
