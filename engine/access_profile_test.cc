// TraceOracle, from a source or from a trace's shared future, against a
// brute-force scan of the same random trace.
#include "engine/access_profile.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/random.h"
#include "engine/token_source.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

TEST(TraceOracle, NextUseIsTheFirstLaterTokenThatAccessesTheKey) {
  constexpr uint32_t kLayers = 2, kExperts = 2, kNeurons = 40, kTokens = 300;
  auto trace = std::make_shared<TokenTrace>();
  Random rng(7);
  for (uint32_t t = 0; t < kTokens; ++t) {
    TokenActivations token{.token = t};
    for (uint32_t l = 0; l < kLayers; ++l) {
      LayerActivations layer{.layer = l};
      for (uint32_t e = 0; e < kExperts; ++e) {
        NeuronSet set{.expert = e};
        // Skewed: low ids often, high ids rarely, some keys never.
        for (uint32_t id = 0; id < kNeurons; ++id) {
          if (rng.Uniform() < 0.6 / (1 + id)) set.active.push_back(id);
        }
        layer.experts.push_back(set);
      }
      token.layers.push_back(layer);
    }
    trace->tokens.push_back(token);
  }
  const NeuronIndexer indexer(kLayers, kExperts, kNeurons);
  std::unique_ptr<TokenSource> source = MakeMemorySource(trace, kTokens);
  absl::StatusOr<std::unique_ptr<TraceOracle>> oracle =
      TraceOracle::Collect(*source, indexer, AccessSet::kActive);
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  // The trace's own future, made once and shared by the runs on it.
  absl::StatusOr<std::shared_ptr<const TraceFuture>> future =
      trace->Future(indexer, AccessSet::kActive, kTokens);
  ASSERT_TRUE(future.ok()) << future.status();
  EXPECT_EQ(trace->Future(indexer, AccessSet::kActive, kTokens)->get(), future->get());
  EXPECT_NE(trace->Future(indexer, AccessSet::kActive, kTokens - 1)->get(), future->get());
  TraceOracle shared(*future);

  // uses[key][t]: token t accesses key.
  std::vector<std::vector<bool>> uses(indexer.key_space(), std::vector<bool>(kTokens, false));
  for (uint32_t t = 0; t < kTokens; ++t) {
    ForEachAccess(trace->tokens[t], indexer, AccessSet::kActive,
                  [&](CacheKey k) { uses[k][t] = true; });
  }
  int checked_never = 0, checked_far = 0;  // answers never, and over 128 tokens ahead
  for (uint32_t t = 0; t < kTokens; ++t) {
    (*oracle)->SetToken(t);
    shared.SetToken(t);
    // Ask in a scrambled key order, some keys twice, as a cache does, and
    // some keys not at every token (their cursors then skip tokens, rare keys
    // beyond the cursor's 128-token span).
    for (uint32_t i = 0; i < 2 * indexer.key_space(); ++i) {
      const CacheKey k = (i * 37) % indexer.key_space();
      if ((t * 7 + k) % 5 == 0 || (k % 11 == 0 && t % 97 != 0)) continue;
      uint32_t expected = UINT32_MAX;
      for (uint32_t u = t + 1; u < kTokens; ++u) {
        if (uses[k][u]) {
          expected = u;
          break;
        }
      }
      checked_never += expected == UINT32_MAX;
      checked_far += expected != UINT32_MAX && expected - t > 128;
      ASSERT_EQ((*oracle)->NextUse(k), expected) << "key " << k << " at token " << t;
      ASSERT_EQ(shared.NextUse(k), expected) << "key " << k << " at token " << t;
    }
  }
  EXPECT_GT(checked_never, 0);
  EXPECT_GT(checked_far, 0);
}

// A generated trace hands every run of its model one shared generator profile,
// the same as one made afresh, and a model that differs in any field its own.
TEST(TokenTrace, SharesTheGeneratorProfileOfEachModel) {
  absl::StatusOr<ModelSpec> model = LoadModel("tinystories-relu-260k");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::shared_ptr<const TokenTrace>> trace = GenerateTokenTrace(*model, 1, 4);
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::shared_ptr<const ActivationProfile> shared = (*trace)->GeneratorProfile(*model);
  EXPECT_EQ((*trace)->GeneratorProfile(*model).get(), shared.get());
  const ActivationProfile fresh = ActivationProfile::OfGenerator(*model);
  EXPECT_EQ(shared->Ranked(), fresh.Ranked());
  EXPECT_EQ(shared->tokens(), fresh.tokens());
  for (CacheKey k = 0; k < fresh.Ranked().size(); ++k) ASSERT_EQ(shared->count(k), fresh.count(k));

  ModelSpec other = *model;
  for (double& r : other.generator.layer_active_ratio) r *= 0.5;
  std::shared_ptr<const ActivationProfile> other_profile = (*trace)->GeneratorProfile(other);
  EXPECT_NE(other_profile.get(), shared.get());
  int differ = 0;
  for (CacheKey k = 0; k < fresh.Ranked().size(); ++k) {
    differ += other_profile->count(k) != shared->count(k);
  }
  EXPECT_GT(differ, 0);
  EXPECT_EQ((*trace)->GeneratorProfile(*model).get(), shared.get());
}

}  // namespace
}  // namespace sparseflash
