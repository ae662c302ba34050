#include "traces/expert_router.h"

#include <set>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ExpertRouter, ChoosesTopKDistinctExperts) {
  ExpertRouter router(8, 2, 0.3, 0.3, 3, 5);
  for (int t = 0; t < 1000; ++t) {
    const auto& chosen = router.Next();
    ASSERT_EQ(chosen.size(), 2u);
    EXPECT_LT(chosen[0], chosen[1]);
    EXPECT_LT(chosen[1], 8u);
  }
}

TEST(ExpertRouter, PersistenceRaisesReuse) {
  auto reuse = [](double persistence) {
    ExpertRouter router(8, 2, 0, persistence, 3, 11);
    std::vector<uint32_t> prev = router.Next();
    int kept = 0;
    for (int t = 0; t < 5000; ++t) {
      std::vector<uint32_t> now = router.Next();
      for (uint32_t e : now) kept += std::count(prev.begin(), prev.end(), e);
      prev = now;
    }
    return kept / 10000.0;
  };
  // Independent top-2 of 8 shares 0.25 of experts on average.
  EXPECT_NEAR(reuse(0), 0.25, 0.02);
  EXPECT_GT(reuse(0.6), 0.6);
}

}  // namespace
}  // namespace sparseflash
