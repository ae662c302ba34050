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

// Three layers of 8 neurons over 5 tokens. From the token before, layer 0 keeps
// 4/4, 1/4, 4/4, 2/4; layer 1 keeps 2/2, 1/2, 2/2, 1/2 (the same ups and downs);
// layer 2 keeps 1/4, 4/4, 1/4, 3/4 (the other way).
TEST(TraceStats, KeptShareCorrelationAcrossLayers) {
  TraceHeader h = testing::TinyHeader(3, 8);
  h.tokens = 5;
  TraceStatsAccumulator acc(h);
  acc.Add(DenseToken(0, {{0, 1, 2, 3}, {0, 1}, {0, 1, 2, 3}}));
  acc.Add(DenseToken(1, {{0, 1, 2, 3}, {0, 1}, {0, 4, 5, 6}}));
  acc.Add(DenseToken(2, {{0, 4, 5, 6}, {0, 2}, {0, 4, 5, 6}}));
  acc.Add(DenseToken(3, {{0, 4, 5, 6}, {0, 2}, {0, 1, 2, 3}}));
  acc.Add(DenseToken(4, {{0, 4, 1, 2}, {0, 3}, {0, 1, 2, 7}}));
  // Kept shares a = (1, .25, 1, .5), b = (1, .5, 1, .5), c = (.25, 1, .25, .75):
  // corr(a, b) = 0.96225, corr(a, c) = -1, corr(b, c) = -0.96225; their mean -1/3.
  EXPECT_NEAR(acc.Finish().kept_share_layer_correlation, -1.0 / 3, 1e-9);
  EXPECT_TRUE(acc.Finish().ToJson().contains("kept_share_layer_correlation"));
  // One layer has no pair to correlate.
  EXPECT_EQ(HandStats().kept_share_layer_correlation, 0);
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

// The statistics say where the trace came from: the generator's profile, seed
// and hot-neuron fingerprint, or what it was recorded from.
TEST(TraceStats, NameTheTracesProvenance) {
  auto stats_of = [](const TraceProvenance& provenance) {
    TraceHeader h = testing::TinyHeader(1, 4);
    h.tokens = 1;
    h.provenance = provenance;
    TraceStatsAccumulator acc(h);
    acc.Add(DenseToken(0, {{0, 1}}));
    return acc.Finish();
  };
  const TraceStats g = stats_of({.generator = "drelu",
                                 .parameters = {{"hot_neurons", "0123456789abcdef"}},
                                 .seed = 7,
                                 .tool = "sparseflash trace gen"});
  EXPECT_NE(g.ToText().find("made by sparseflash trace gen: generator profile drelu, seed 7, "
                            "hot_neurons 0123456789abcdef"),
            std::string::npos)
      << g.ToText();
  EXPECT_EQ(g.ToJson()["provenance"]["seed"], 7);
  EXPECT_EQ(g.ToJson()["provenance"]["parameters"]["hot_neurons"], "0123456789abcdef");
  const TraceStats r = stats_of(
      {.recorded_from = "model.bin", .inputs = "a prompt", .tool = "sparseflash trace record"});
  EXPECT_NE(r.ToText().find("made by sparseflash trace record; recorded from model.bin (inputs: a "
                            "prompt)"),
            std::string::npos)
      << r.ToText();
  EXPECT_FALSE(r.ToJson()["provenance"].contains("generator"));
}

}  // namespace
}  // namespace sparseflash
