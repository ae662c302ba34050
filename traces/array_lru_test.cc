#include "traces/array_lru.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ArrayLru, EvictsLeastRecentlyUsed) {
  ArrayLru lru(10, 2);
  EXPECT_FALSE(lru.Access(1));
  EXPECT_FALSE(lru.Access(2));
  EXPECT_TRUE(lru.Access(1));   // order now 1, 2
  EXPECT_FALSE(lru.Access(3));  // evicts 2
  EXPECT_TRUE(lru.Access(1));
  EXPECT_FALSE(lru.Access(2));  // 2 was evicted; evicts 3
  EXPECT_FALSE(lru.Access(3));
  EXPECT_EQ(lru.size(), 2u);
}

TEST(ArrayLru, ZeroCapacityNeverHits) {
  ArrayLru lru(4, 0);
  EXPECT_FALSE(lru.Access(1));
  EXPECT_FALSE(lru.Access(1));
}

}  // namespace
}  // namespace sparseflash
