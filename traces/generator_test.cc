#include "traces/generator.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "traces/model_catalog.h"
#include "traces/trace_stats.h"

namespace sparseflash {
namespace {

// A catalog model with narrower layers, so a test generates in milliseconds.
ModelSpec Narrow(const std::string& name, int d_ffn) {
  absl::StatusOr<ModelSpec> m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status();
  m->d_ffn = d_ffn;
  return *m;
}

std::vector<TokenActivations> Generate(const ModelSpec& m, int threads, uint64_t tokens,
                                       int setup_threads = 0) {
  TraceGenerator gen(
      m, {.seed = 7, .tokens = tokens, .threads = threads, .setup_threads = setup_threads});
  std::vector<TokenActivations> out;
  for (TokenActivations t; gen.Next(&t); t = {}) out.push_back(std::move(t));
  return out;
}

void ExpectSameTokens(const std::vector<TokenActivations>& a,
                      const std::vector<TokenActivations>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t t = 0; t < a.size(); ++t) {
    ASSERT_EQ(a[t].layers.size(), b[t].layers.size());
    for (size_t l = 0; l < a[t].layers.size(); ++l) {
      const LayerActivations &x = a[t].layers[l], &y = b[t].layers[l];
      EXPECT_EQ(x.layer, y.layer);
      ASSERT_EQ(x.experts.size(), y.experts.size()) << "token " << t << " layer " << l;
      for (size_t e = 0; e < x.experts.size(); ++e) {
        EXPECT_EQ(x.experts[e].expert, y.experts[e].expert);
        EXPECT_EQ(x.experts[e].active, y.experts[e].active) << "token " << t << " layer " << l;
        EXPECT_EQ(x.experts[e].predicted, y.experts[e].predicted);
        EXPECT_EQ(x.experts[e].gate_only, y.experts[e].gate_only);
      }
    }
  }
}

// Layers are stepped (and their streams made first) on several threads; the
// tokens are those of one thread, for a dense model and for an MoE model (whose
// routers run on those threads too).
TEST(TraceGenerator, SameTokensForAnyThreadCount) {
  for (const char* name : {"turbosparse-mistral-7b", "turbosparse-mixtral-47b"}) {
    const ModelSpec m = Narrow(name, 1024);
    const std::vector<TokenActivations> one = Generate(m, 1, 12);
    ASSERT_EQ(one.size(), 12u);
    EXPECT_FALSE(one[3].layers[5].experts[0].active.empty()) << name;
    for (int threads : {2, 3, 64}) ExpectSameTokens(one, Generate(m, threads, 12));
    // Streams made on more threads than step them, or on fewer (0: as many).
    ExpectSameTokens(one, Generate(m, 1, 12, 2));
    ExpectSameTokens(one, Generate(m, 1, 12, 64));
    ExpectSameTokens(one, Generate(m, 3, 12, 2));
  }
}

// The statistics of `tokens` tokens of `m`'s generator (seed 7, two threads).
TraceStats StatsOf(const ModelSpec& m, uint64_t tokens) {
  TraceGenerator gen(m, {.seed = 7, .tokens = tokens, .threads = 2});
  TraceStatsAccumulator acc(gen.header());
  for (TokenActivations t; gen.Next(&t); t = {}) acc.Add(t);
  return acc.Finish();
}

// A token that changes the context changes what every layer keeps: with the
// reuse swing, the share of neurons a token keeps moves in all layers together
// (as in the TinyStories recordings); without it each layer's share moves on
// its own. The swing is symmetric, so the consecutive tokens' similarity and
// the active neurons per token stay as they were.
TEST(TraceGenerator, ATokensReuseSwingsInEveryLayerAtOnce) {
  ModelSpec m = Narrow("turbosparse-mistral-7b", 4096);
  m.generator.reuse_swing = 0;
  const TraceStats alike = StatsOf(m, 300);
  m.generator.reuse_swing = 0.13;
  const TraceStats swinging = StatsOf(m, 300);
  EXPECT_LT(std::abs(alike.kept_share_layer_correlation), 0.1);
  EXPECT_GT(swinging.kept_share_layer_correlation, 0.5);
  EXPECT_NEAR(swinging.overall.jaccard_consecutive / alike.overall.jaccard_consecutive, 1.0, 0.02);
  EXPECT_NEAR(swinging.overall.active_ratio_mean / alike.overall.active_ratio_mean, 1.0, 0.02);
}

// A generated trace names the inputs that decide its hot neurons, so a run
// knows whether the model's generator profile ranks them: a trace made with
// another model's profile, other active ratios or another skew is not the
// model's; one made with other dynamics (persistence, reuse swing,
// co-activation, predictor) has the same hot neurons and still is.
TEST(TraceGenerator, ATraceNamesTheInputsOfItsHotNeurons) {
  const ModelSpec model = Narrow("bamboo-7b", 1024);
  auto header_of = [](const ModelSpec& m) { return TraceGenerator(m, {.tokens = 1}).header(); };
  const std::vector<float> activity = ExpectedActivity(model);
  EXPECT_TRUE(GeneratedFor(header_of(model), model));

  ModelSpec dynamics = model;
  dynamics.generator.persistence = 0.3;
  dynamics.generator.reuse_swing = 0.5;
  dynamics.generator.coactivation = 0.4;
  dynamics.generator.predicted_ratio = 2;
  EXPECT_EQ(ExpectedActivity(dynamics), activity);
  EXPECT_EQ(HotNeuronFingerprint(dynamics), HotNeuronFingerprint(model));
  EXPECT_TRUE(GeneratedFor(header_of(dynamics), model));

  ModelSpec ratios = model, skew = model, other = model;
  ratios.generator.layer_active_ratio[3] *= 1.1;
  skew.generator.layer_skew.clear();  // the power law of top80_share instead of the anchors
  skew.generator.top80_share = 0.3;
  other.generator = Narrow("turbosparse-mistral-7b", 1024).generator;
  for (const ModelSpec* m : {&ratios, &skew, &other}) {
    EXPECT_NE(ExpectedActivity(*m), activity);
    EXPECT_NE(HotNeuronFingerprint(*m), HotNeuronFingerprint(model));
    EXPECT_FALSE(GeneratedFor(header_of(*m), model));
  }
  // A trace written before the fingerprint was recorded goes by its model name.
  TraceHeader older = header_of(other);
  older.provenance.parameters.erase(kHotNeuronsParameter);
  EXPECT_TRUE(GeneratedFor(older, model));
  older.provenance.tool = "sparseflash trace import";
  EXPECT_FALSE(GeneratedFor(older, model));
}

}  // namespace
}  // namespace sparseflash
