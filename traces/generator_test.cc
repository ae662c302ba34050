#include "traces/generator.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "gtest/gtest.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

// A catalog model with narrower layers, so a test generates in milliseconds.
ModelSpec Narrow(const std::string& name, int d_ffn) {
  absl::StatusOr<ModelSpec> m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status();
  m->d_ffn = d_ffn;
  return *m;
}

std::vector<TokenActivations> Generate(const ModelSpec& m, int threads, uint64_t tokens) {
  TraceGenerator gen(m, {.seed = 7, .tokens = tokens, .threads = threads});
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

// Layers are stepped on several threads; the tokens are those of one thread,
// for a dense model and for an MoE model (whose routers run on those threads too).
TEST(TraceGenerator, SameTokensForAnyThreadCount) {
  for (const char* name : {"turbosparse-mistral-7b", "turbosparse-mixtral-47b"}) {
    const ModelSpec m = Narrow(name, 1024);
    const std::vector<TokenActivations> one = Generate(m, 1, 12);
    ASSERT_EQ(one.size(), 12u);
    EXPECT_FALSE(one[3].layers[5].experts[0].active.empty()) << name;
    for (int threads : {2, 3, 64}) ExpectSameTokens(one, Generate(m, threads, 12));
  }
}

// Per token and layer, the share of the previous token's predicted neurons
// the token keeps; rows are tokens from the second on.
std::vector<std::vector<double>> KeptShares(const std::vector<TokenActivations>& tokens) {
  std::vector<std::vector<double>> kept;
  for (size_t t = 1; t < tokens.size(); ++t) {
    std::vector<double>& row = kept.emplace_back();
    for (size_t l = 0; l < tokens[t].layers.size(); ++l) {
      const std::vector<uint32_t>& now = tokens[t].layers[l].experts[0].predicted;
      const std::vector<uint32_t>& before = tokens[t - 1].layers[l].experts[0].predicted;
      std::vector<uint32_t> both;
      std::set_intersection(now.begin(), now.end(), before.begin(), before.end(),
                            std::back_inserter(both));
      row.push_back(before.empty() ? 0 : static_cast<double>(both.size()) / before.size());
    }
  }
  return kept;
}

// The mean over pairs of layers of the correlation, across tokens, of their
// kept shares.
double MeanCrossLayerCorrelation(const std::vector<std::vector<double>>& kept) {
  const size_t tokens = kept.size(), layers = kept[0].size();
  std::vector<double> mean(layers, 0), sd(layers, 0);
  for (size_t l = 0; l < layers; ++l) {
    for (size_t t = 0; t < tokens; ++t) mean[l] += kept[t][l] / tokens;
    for (size_t t = 0; t < tokens; ++t) sd[l] += std::pow(kept[t][l] - mean[l], 2) / tokens;
    sd[l] = std::sqrt(sd[l]);
  }
  double sum = 0;
  int pairs = 0;
  for (size_t a = 0; a < layers; ++a) {
    for (size_t b = a + 1; b < layers; ++b, ++pairs) {
      double cov = 0;
      for (size_t t = 0; t < tokens; ++t) cov += (kept[t][a] - mean[a]) * (kept[t][b] - mean[b]);
      sum += cov / tokens / (sd[a] * sd[b]);
    }
  }
  return sum / pairs;
}

double MeanOf(const std::vector<std::vector<double>>& rows) {
  double sum = 0, n = 0;
  for (const std::vector<double>& row : rows) {
    for (double x : row) sum += x, n += 1;
  }
  return sum / n;
}

// A token that changes the context changes what every layer keeps: with the
// reuse swing, the share of neurons a token keeps moves in all layers together
// (as in the TinyStories recordings); without it each layer's share moves on
// its own. The swing is symmetric, so the mean share kept and the active
// neurons per token stay as they were.
TEST(TraceGenerator, ATokensReuseSwingsInEveryLayerAtOnce) {
  ModelSpec m = Narrow("turbosparse-mistral-7b", 4096);
  m.generator.reuse_swing = 0;
  const std::vector<TokenActivations> alike = Generate(m, 2, 300);
  m.generator.reuse_swing = 0.13;
  const std::vector<TokenActivations> swinging = Generate(m, 2, 300);
  const std::vector<std::vector<double>> kept_alike = KeptShares(alike);
  const std::vector<std::vector<double>> kept_swinging = KeptShares(swinging);
  EXPECT_LT(std::abs(MeanCrossLayerCorrelation(kept_alike)), 0.1);
  EXPECT_GT(MeanCrossLayerCorrelation(kept_swinging), 0.5);
  EXPECT_NEAR(MeanOf(kept_swinging) / MeanOf(kept_alike), 1.0, 0.02);
  auto active = [](const std::vector<TokenActivations>& tokens) {
    double n = 0;
    for (const TokenActivations& t : tokens) {
      for (const LayerActivations& l : t.layers) n += l.experts[0].active.size();
    }
    return n;
  };
  EXPECT_NEAR(active(swinging) / active(alike), 1.0, 0.02);
}

}  // namespace
}  // namespace sparseflash
