#include "common/units.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ParseByteSize, AcceptsBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseByteSize("7GiB"), 7 * kGiB);
  EXPECT_EQ(*ParseByteSize("6.5GB"), 6'500'000'000);
  EXPECT_EQ(*ParseByteSize("512 MiB"), 512 * kMiB);
  EXPECT_EQ(*ParseByteSize("4096"), 4096);
  EXPECT_EQ(*ParseByteSize("4k"), 4096);
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
