#include "engine/real/storage_warmup.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/real/real_env.h"

namespace sparseflash {
namespace {

TEST(ReadFileOnce, ReadsTheWholeFileFromStorageNotThePageCache) {
  const std::string path = ::testing::TempDir() + "/warmup.bin";
  // 5 MiB and a tail: two requests, the second ending off a block boundary.
  const int64_t size = (int64_t{5} << 20) + 123;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    std::string bytes(static_cast<size_t>(size), 'x');
    out << bytes;
  }  // the file's pages are in the page cache now
  std::vector<int64_t> reported;
  const int64_t before = ProcessStorageReadBytes();
  absl::StatusOr<StorageWarmup> w =
      ReadFileOnce(path, [&](int64_t done) { reported.push_back(done); });
  const int64_t after = ProcessStorageReadBytes();
  ASSERT_TRUE(w.ok()) << w.status();
  if (!w->direct) {
    GTEST_SKIP() << ::testing::TempDir() << " refuses O_DIRECT";
  }
  EXPECT_EQ(w->bytes, size);
  EXPECT_GT(w->seconds, 0);
  EXPECT_TRUE(reported.empty());  // progress comes every GiB
  // Past the page cache: the kernel counts the reads as this process's.
  if (before >= 0) {
    EXPECT_GE(after - before, size - 4096);
  }
}

TEST(ReadFileOnce, NamesAFileItCannotOpen) {
  const std::string path = ::testing::TempDir() + "/no-such-weights.sfw";
  absl::StatusOr<StorageWarmup> w = ReadFileOnce(path);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find(path), std::string::npos) << w.status();
}

}  // namespace
}  // namespace sparseflash
