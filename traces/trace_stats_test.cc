#include "traces/trace_stats.h"

#include "gtest/gtest.h"
#include "traces/test_util.h"

namespace sparseflash {
namespace {

using testing::DenseToken;

// One layer of 4 neurons; tokens {0,1} {1,2} {1,2} {3}. One warm-up token.
TraceStats HandStats() {
  TraceHeader h = testing::TinyHeader(1, 4);
  h.tokens = 4;
  TraceStatsAccumulator acc(h);
  acc.Add(DenseToken(0, {{0, 1}}));
  acc.Add(DenseToken(1, {{1, 2}}));
  acc.Add(DenseToken(2, {{1, 2}}));
  acc.Add(DenseToken(3, {{3}}));
  return acc.Finish();
}

TEST(TraceStats, ActiveRatioAndJaccard) {
  TraceStats s = HandStats();
  EXPECT_DOUBLE_EQ(s.layers[0].active_ratio_mean, 0.4375);
  EXPECT_DOUBLE_EQ(s.layers[0].active_ratio_min, 0.25);
  EXPECT_DOUBLE_EQ(s.layers[0].active_ratio_max, 0.5);
  EXPECT_NEAR(s.layers[0].jaccard_consecutive, (1.0 / 3 + 1 + 0) / 3, 1e-12);
}

TEST(TraceStats, SkewShares) {
  // Counts 1, 3, 2, 1: 80 % of 7 is reached 0.6 of the way into the third neuron.
  EXPECT_NEAR(HandStats().layers[0].share_neurons_for_80pct, 0.65, 1e-12);
}

TEST(TraceStats, WindowFiguresAfterWarmup) {
  TraceStats s = HandStats();
  EXPECT_EQ(s.warmup_tokens, 1);
  EXPECT_NEAR(s.layers[0].new_per_token[0], 2.0 / 12, 1e-12);  // k = 1
  EXPECT_NEAR(s.layers[0].new_per_token[1], 2.0 / 12, 1e-12);  // k = 2
  EXPECT_NEAR(s.layers[0].window_cache_fraction[0], 5.0 / 12, 1e-12);
  EXPECT_NEAR(s.layers[0].window_cache_fraction[1], 8.0 / 12, 1e-12);
}

TEST(TraceStats, LruHitRates) {
  TraceStats s = HandStats();
  EXPECT_DOUBLE_EQ(s.layers[0].lru_hit_rate[0], 0.0);  // capacity 0
  EXPECT_DOUBLE_EQ(s.layers[0].lru_hit_rate[2], 0.6);  // capacity 2
  EXPECT_DOUBLE_EQ(s.overall.lru_hit_rate[2], 0.6);
}

TEST(TraceStats, PredictorRecallAndRatio) {
  TraceHeader h = testing::TinyHeader(1, 10);
  h.tokens = 1;
  h.has_predicted = true;
  TraceStatsAccumulator acc(h);
  TokenActivations t = DenseToken(0, {{0, 1, 2}});
  t.layers[0].experts[0].predicted = {1, 2, 3, 4};
  acc.Add(t);
  TraceStats s = acc.Finish();
  EXPECT_NEAR(s.layers[0].predictor_recall, 2.0 / 3, 1e-12);
  EXPECT_NEAR(s.layers[0].predicted_ratio_mean, 0.4, 1e-12);
  EXPECT_EQ(s.window_set, "predicted");
}

TEST(TraceStats, JsonHasDocumentedKeys) {
  nlohmann::json j = HandStats().ToJson();
  for (const char* key : {"active_ratio_mean", "share_neurons_for_80pct", "jaccard_consecutive"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* k : {"1", "2", "4", "8", "16"}) {
    EXPECT_TRUE(j["new_per_token"].contains(k));
    EXPECT_TRUE(j["window_cache_fraction"].contains(k));
  }
  for (const char* k : {"0.1", "0.25", "0.5"}) EXPECT_TRUE(j["lru_hit_rate"].contains(k));
  ASSERT_EQ(j["layers"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["layers"][0]["active_ratio_mean"].get<double>(), 0.4375);
}

}  // namespace
}  // namespace sparseflash
