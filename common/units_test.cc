#include "common/units.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ParseByteSize, AcceptsBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseByteSize("7GiB"), 7 * kGiB);
  EXPECT_EQ(*ParseByteSize("6.5GB"), 6'500'000'000);
  EXPECT_EQ(*ParseByteSize("512 MiB"), 512 * kMiB);
  EXPECT_EQ(*ParseByteSize("4096"), 4096);
  EXPECT_EQ(*ParseByteSize("12b"), 12);
}

TEST(ParseByteSize, RejectsAmbiguousUnits) {
  for (const char* text : {"10G", "4k", "512m", "3t"}) {
    absl::StatusOr<int64_t> s = ParseByteSize(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find("ambiguous"), std::string::npos) << s.status();
    EXPECT_NE(s.status().message().find("GiB"), std::string::npos) << s.status();
  }
}

TEST(ParseByteSize, RejectsAbsurdSizes) {
  EXPECT_FALSE(ParseByteSize("1e30").ok());
  EXPECT_FALSE(ParseByteSize("2PiB").ok());
  EXPECT_FALSE(ParseByteSize("nan").ok());
  EXPECT_FALSE(ParseByteSize("inf GB").ok());
  EXPECT_TRUE(ParseByteSize("1TiB").ok());
}

TEST(ParseByteSize, RejectsGarbage) {
  EXPECT_FALSE(ParseByteSize("lots").ok());
  EXPECT_FALSE(ParseByteSize("-3GB").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
}

TEST(AlignUp, RoundsToMultiple) {
  EXPECT_EQ(AlignUp(7680, 4096), 8192);
  EXPECT_EQ(AlignUp(8192, 4096), 8192);
}

}  // namespace
}  // namespace sparseflash

#include "common/hash.h"

namespace sparseflash {
namespace {

// Values computed independently (a few lines of Python with the same seed and
// prime); a change here would change every generated trace and database key.
TEST(StableHash64, MatchesKnownValuesAndStreams) {
  EXPECT_EQ(StableHash64(""), 0x14650fb0739d0383ull);
  EXPECT_EQ(StableHash64("a"), 0x44bd8ad473cd9906ull);
  EXPECT_EQ(StableHash64("foobar"), 0x88fad7c0a8ff07f2ull);
  EXPECT_EQ(StableHash64("bar", StableHash64("foo")), StableHash64("foobar"));
}

}  // namespace
}  // namespace sparseflash
