// The synthetic generator reproduces the published activation statistics
// (reference/models.md) and the real data in data/.
#include <fstream>
#include <map>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/repo_data.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/test_util.h"
#include "traces/text_format.h"
#include "traces/trace_stats.h"

namespace sparseflash {
namespace {

TraceStats Generate(const std::string& model, uint64_t tokens, uint64_t seed = 1) {
  ModelSpec m = *ModelCatalog::Builtin().Find(model);
  TraceGenerator gen(m, {.seed = seed, .tokens = tokens});
  TraceStatsAccumulator acc(gen.header());
  TokenActivations token;
  while (gen.Next(&token)) acc.Add(token);
  return acc.Finish();
}

TEST(Calibration, TurboSparseMistralActiveRatio) {
  TraceStats s = Generate("turbosparse-mistral-7b", 150);
  EXPECT_NEAR(s.overall.active_ratio_mean, 0.10, 0.015);
  EXPECT_LE(s.overall.active_ratio_min, 0.08);  // lowest layer
  EXPECT_GE(s.overall.active_ratio_max, 0.18);  // highest layer
  for (const LayerStats& l : s.layers) {
    EXPECT_GE(l.active_ratio_mean, 0.05);
    EXPECT_LE(l.active_ratio_mean, 0.23);
  }
}

// Share of neurons carrying 80 % of activations per layer, from the Bamboo CSV.
std::map<int, double> BambooTop80() {
  std::ifstream in(testing::RepoData("activation-stats/bamboo7b_layer_cdf.csv"));
  EXPECT_TRUE(in.good()) << "data/ is missing (run the tests from the repository root)";
  std::map<int, std::vector<std::pair<double, double>>> points;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream row(line);
    int layer;
    double x, y;
    char comma;
    row >> layer >> comma >> x >> comma >> y;
    points[layer].push_back({x, y});
  }
  std::map<int, double> out;
  for (auto& [layer, pts] : points) {
    for (size_t i = 1; i < pts.size(); ++i) {
      if (pts[i].second >= 0.8) {
        auto [x0, y0] = pts[i - 1];
        auto [x1, y1] = pts[i];
        out[layer] = x0 + (0.8 - y0) / (y1 - y0) * (x1 - x0);
        break;
      }
    }
  }
  return out;
}

TEST(Calibration, BambooPerLayerSkewMatchesCsv) {
  std::map<int, double> csv = BambooTop80();
  ASSERT_EQ(csv.size(), 32u);
  TraceStats s = Generate("bamboo-7b", 500);
  for (int l = 0; l < 32; ++l) {
    EXPECT_NEAR(s.layers[l].share_neurons_for_80pct, csv[l], 0.05) << "layer " << l;
  }
}

TEST(Calibration, Opt67bRatiosAndWindow) {
  TraceStats s = Generate("opt-6.7b", 300);
  EXPECT_NEAR(s.overall.active_ratio_mean, 0.033, 0.003);
  EXPECT_NEAR(s.layers.front().active_ratio_mean, 0.015, 0.005);
  EXPECT_NEAR(s.layers.back().active_ratio_mean, 0.054, 0.01);
  EXPECT_EQ(s.window_set, "predicted");
  EXPECT_NEAR(s.overall.new_per_token[3], 0.024, 0.005);         // k = 4
  EXPECT_NEAR(s.overall.window_cache_fraction[3], 0.24, 0.045);  // "about 24 %"
}

TEST(Calibration, Falcon7bSlidingWindowCurve) {
  // LLM in a Flash Figure 4a, layer 10: neurons new to a window of k tokens.
  const std::map<int, double> published = {{1, 3.94}, {2, 3.05}, {3, 2.55}, {4, 2.23},
                                           {5, 1.99}, {6, 1.81}, {8, 1.54}, {10, 1.36}};
  TraceStats s = Generate("falcon-7b-relu", 300);
  for (auto [k, value] : published) {
    double got = 100 * s.layers[10].new_per_token[k - 1];
    EXPECT_NEAR(got, value, 0.15 * value) << "k = " << k;
  }
}

TEST(Calibration, Mixtral47bRouting) {
  TraceStats s = Generate("turbosparse-mixtral-47b", 80);
  ASSERT_EQ(s.expert_share.size(), 8u);
  double total = 0;
  for (double share : s.expert_share) {
    EXPECT_GT(share, 0.05);  // load-balanced: no expert starves
    total += share;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_NEAR(s.active_ratio_in_chosen_experts, 0.15, 0.02);
  EXPECT_NEAR(s.overall.active_ratio_mean, 0.0375, 0.0075);  // top-2 of 8 x 15 %
  EXPECT_GE(s.expert_persistence, 0.464);                    // at least the random-sharing baseline
}

TraceStats GoldenStats(const ModelSpec& m, const std::string& name) {
  const std::string golden = testing::TempPath(name + ".trace");
  EXPECT_TRUE(
      ImportTextTrace(testing::RepoData("tinystories-relu-260k/golden/" + name + ".trace.txt"),
                      ShapeOf(m), {}, golden, {.overwrite = true})
          .ok());
  absl::StatusOr<TraceStats> real = ComputeTraceStats(golden);
  EXPECT_TRUE(real.ok()) << real.status();
  return real.ok() ? *real : TraceStats{};
}

TEST(Calibration, TinyStoriesProfileMatchesGoldenTraces) {
  ModelSpec m = *ModelCatalog::Builtin().Find("tinystories-relu-260k");
  const TraceStats real = GoldenStats(m, "greedy_from_bos");
  EXPECT_EQ(real.tokens, 64u);
  TraceStats synthetic = Generate("tinystories-relu-260k", 2000);
  for (int l = 0; l < 4; ++l) {
    EXPECT_NEAR(synthetic.layers[l].active_ratio_mean, real.layers[l].active_ratio_mean, 0.03)
        << "layer " << l;
  }
}

// The recordings' layers keep more or fewer of the token before's neurons
// together (a token that changes the context changes every layer's reuse);
// the generator's reuse swing gives its layers the same correlation, where
// without it they move on their own (about 0).
TEST(Calibration, TinyStoriesLayersKeepAlikeAsInTheGoldenTraces) {
  ModelSpec m = *ModelCatalog::Builtin().Find("tinystories-relu-260k");
  const TraceStats synthetic = Generate("tinystories-relu-260k", 2000);
  for (const char* name : {"greedy_from_bos", "greedy_prompt_big_dog"}) {
    const TraceStats real = GoldenStats(m, name);
    EXPECT_GT(real.kept_share_layer_correlation, 0.3) << name;
    EXPECT_NEAR(synthetic.kept_share_layer_correlation, real.kept_share_layer_correlation, 0.15)
        << name;
  }
}

}  // namespace
}  // namespace sparseflash
