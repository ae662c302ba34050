#include "common/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/files.h"
#include "gtest/gtest.h"

namespace sparseflash {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sf_atomic_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "out.txt").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Read() const { return ReadWholeFile(path_, "test file").value_or("<missing>"); }
  int Entries() const {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(AtomicFileTest, CommitReplacesTheFile) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path_, "new contents").ok());
  EXPECT_EQ(Read(), "new contents");
  EXPECT_EQ(Entries(), 1);
}

TEST_F(AtomicFileTest, AbandonedWriterKeepsTheEarlierFileAndLeavesNothing) {
  ASSERT_TRUE(WriteFileAtomically(path_, "good").ok());
  {
    auto f = AtomicFile::Create(path_);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Write("half of a new file").ok());
  }
  EXPECT_EQ(Read(), "good");
  EXPECT_EQ(Entries(), 1);
}

TEST_F(AtomicFileTest, RefusesToOverwriteWhenAsked) {
  ASSERT_TRUE(WriteFileAtomically(path_, "good").ok());
  absl::Status s = WriteFileAtomically(path_, "x", {.overwrite = false});
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_EQ(Read(), "good");
}

TEST_F(AtomicFileTest, RefusesADirectory) {
  absl::Status s = WriteFileAtomically(dir_.string(), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("directory"), absl::string_view::npos) << s;
}

TEST_F(AtomicFileTest, MissingFolderIsNamed) {
  absl::Status s = WriteFileAtomically((dir_ / "no" / "such" / "f").string(), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no/such/f"), absl::string_view::npos) << s;
}

// A file-size limit stands in for a full disk: writes past it fail (EFBIG).
TEST_F(AtomicFileTest, FailedWriteKeepsTheEarlierFile) {
  ASSERT_TRUE(WriteFileAtomically(path_, "good").ok());
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = {4096, old.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFileAtomically(path_, std::string(1 << 20, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path_), absl::string_view::npos) << s;
  EXPECT_EQ(Read(), "good");
  EXPECT_EQ(Entries(), 1);
}

TEST(FilesTest, ReadWholeFileRefusesDirectoriesAndNamesMissingFiles) {
  auto dir = ReadWholeFile(fs::temp_directory_path().string(), "sweep");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory; expected a sweep"), absl::string_view::npos);
  auto missing = ReadWholeFile("/nonexistent/x.textproto", "device profile");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.textproto"), absl::string_view::npos);
}

TEST(FilesTest, LongNamesDoNotThrow) {
  const std::string long_name(300, 'a');
  EXPECT_FALSE(PathExists(long_name));
  EXPECT_FALSE(NamesAFile(long_name));
  EXPECT_TRUE(NamesAFile(long_name + ".textproto"));
}

}  // namespace
}  // namespace sparseflash
