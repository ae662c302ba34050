#include "common/random.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(Random, SameSeedSameSequence) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(Random, UniformMeanIsHalf) {
  Random r(7);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += r.Uniform();
  EXPECT_NEAR(sum / n, 0.5, 0.005);
}

TEST(Random, BelowStaysInRange) {
  Random r(9);
  for (int i = 0; i < 10000; ++i) EXPECT_LT(r.Below(7), 7u);
}

}  // namespace
}  // namespace sparseflash
