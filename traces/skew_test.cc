#include "traces/skew.h"

#include <numeric>

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

TEST(Skew, AnchorsReproduceTheirShares) {
  std::vector<double> q = PropensitiesFromAnchors(10000, 0.1, {{0.1, 0.5}, {0.4, 0.8}});
  EXPECT_NEAR(Mean(q), 0.1, 1e-9);
  EXPECT_NEAR(ShareOfNeuronsCarrying(q, 0.8), 0.4, 0.001);
  EXPECT_NEAR(ShareOfNeuronsCarrying(q, 0.5), 0.1, 0.001);
}

TEST(Skew, PowerLawHitsTop80AndStaysBelowOne) {
  // A small mean keeps every propensity below the cap, so the shape is the law's.
  std::vector<double> q = PropensitiesPowerLaw(20000, 1e-4, 0.26);
  EXPECT_NEAR(Mean(q), 1e-4, 1e-9);
  for (double x : q) EXPECT_LE(x, 1.0);
  EXPECT_NEAR(ShareOfNeuronsCarrying(q, 0.8), 0.26, 0.02);
}

TEST(Skew, CapPreservesMean) {
  std::vector<double> v{3.0, 0.5, 0.25, 0.25};
  CapPreservingMean(&v, 1.0);
  EXPECT_DOUBLE_EQ(v[0], 1.0);
  EXPECT_NEAR(Mean(v), 1.0, 1e-9);
}

TEST(Skew, ShareOfNeuronsOnHandCounts) {
  // 4 neurons with counts 6, 2, 1, 1: the top one carries 60 %, two carry 80 %.
  EXPECT_NEAR(ShareOfNeuronsCarrying({1, 6, 2, 1}, 0.8), 0.5, 1e-9);
  EXPECT_NEAR(ShareOfNeuronsCarrying({1, 6, 2, 1}, 0.6), 0.25, 1e-9);
  EXPECT_EQ(ShareOfNeuronsCarrying({0, 0}, 0.8), 0);
}

}  // namespace
}  // namespace sparseflash
