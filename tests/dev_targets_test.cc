// The development targets of reference/dev-targets.md, run through the simulator
// with the same inputs for all of them (catalog profiles and models, default
// strategy options except the switches each row names). `recorded` is what the
// simulator gave when this table was last updated; a change beyond 3 % fails, so
// a regression (or an improvement) is seen and the table updated on purpose.
// Published values are printed beside them with the error; missing a published
// target does not fail the test (see docs/dev-targets.md for why each misses).
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "devices/device_catalog.h"
#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

enum class Metric { kIoMsPerToken, kTokensPerSecond, kHitRate };

struct Target {
  const char* name;
  const char* device;
  const char* model;
  const char* strategy;
  std::vector<std::string> options;
  std::string policy;
  double memory_gb;  // > 0: --memory; else --ffn-resident
  double ffn_resident;
  Metric metric;
  double published;
  double recorded;
};

double Measure(const Target& t) {
  SimulationConfig c;
  c.device = *LoadDevice(t.device);
  c.model = *LoadModel(t.model);
  c.strategy = t.strategy;
  c.options = t.options;
  c.policy = t.policy;
  if (t.memory_gb > 0) {
    c.memory_bytes = static_cast<int64_t>(t.memory_gb * 1e9);
  } else {
    c.ffn_resident = t.ffn_resident;
  }
  c.tokens = 64;
  absl::StatusOr<SimulationResult> r = Simulate(c);
  EXPECT_TRUE(r.ok()) << t.name << ": " << r.status();
  if (!r.ok()) return 0;
  RunSummary s = Summarize(r->record);
  switch (t.metric) {
    case Metric::kIoMsPerToken:
      return s.io_ms_per_token;
    case Metric::kTokensPerSecond:
      return s.decode_tokens_per_s;
    case Metric::kHitRate:
      return s.hit_rate;
  }
  return 0;
}

const std::vector<std::string> kBaseline = {"npu=false", "pipeline=none", "hot_share=0",
                                            "warm=index"};

std::vector<Target> Targets() {
  auto with = [](std::vector<std::string> v, const std::string& extra) {
    v.push_back(extra);
    return v;
  };
  return {
      // (a) LLM in a Flash Table 2: I/O ms per token, OPT-6.7B fp16 on m1max, 6.7 GB.
      {"LF naive",
       "m1max",
       "opt-6.7b",
       "llmflash",
       {"predictor=false", "hybrid_share=0"},
       "",
       6.7,
       -1,
       Metric::kIoMsPerToken,
       2196,
       2179.8},
      {"LF hybrid",
       "m1max",
       "opt-6.7b",
       "llmflash",
       {"predictor=false"},
       "",
       6.7,
       -1,
       Metric::kIoMsPerToken,
       1090,
       1090.0},
      {"LF +predictor",
       "m1max",
       "opt-6.7b",
       "llmflash",
       {"window=0", "bundling=false"},
       "",
       6.7,
       -1,
       Metric::kIoMsPerToken,
       738,
       719.5},
      {"LF +windowing",
       "m1max",
       "opt-6.7b",
       "llmflash",
       {"bundling=false"},
       "",
       6.7,
       -1,
       Metric::kIoMsPerToken,
       164,
       243.2},
      {"LF +bundling",
       "m1max",
       "opt-6.7b",
       "llmflash",
       {},
       "",
       6.7,
       -1,
       Metric::kIoMsPerToken,
       87,
       134.4},
      // (b) PowerInfer-2 motivation, Mistral-7B on oneplus12, tokens/s.
      {"motivation in-memory",
       "oneplus12",
       "mistral-7b",
       "in_memory",
       {},
       "",
       12,
       -1,
       Metric::kTokensPerSecond,
       12.4,
       9.87},
      {"motivation PowerInfer 50% offloaded",
       "oneplus12",
       "mistral-7b",
       "powerinfer2",
       {"npu=false", "pipeline=none", "hot_share=0"},
       "static",
       0,
       0.5,
       Metric::kTokensPerSecond,
       1.4,
       0.952},
      {"motivation LLMFlash 50% offloaded",
       "oneplus12",
       "mistral-7b",
       "llmflash",
       {},
       "",
       0,
       0.5,
       Metric::kTokensPerSecond,
       2.3,
       0.512},
      // (c) PowerInfer-2 ablation, Bamboo-7B on oneplus12, 50 % of the FFN offloaded.
      {"ablation baseline", "oneplus12", "bamboo-7b", "powerinfer2",
       with(kBaseline, "layout=matrix"), "static", 0, 0.5, Metric::kTokensPerSecond, 0.40, 1.383},
      {"ablation +bundle", "oneplus12", "bamboo-7b", "powerinfer2",
       with(kBaseline, "layout=split-bundle"), "static", 0, 0.5, Metric::kTokensPerSecond, 1.09,
       1.981},
      {"ablation +neuron cache",
       "oneplus12",
       "bamboo-7b",
       "powerinfer2",
       {"npu=false", "pipeline=none"},
       "",
       0,
       0.5,
       Metric::kTokensPerSecond,
       4.18,
       7.262},
      {"ablation +cluster pipeline",
       "oneplus12",
       "bamboo-7b",
       "powerinfer2",
       {"npu=false"},
       "",
       0,
       0.5,
       Metric::kTokensPerSecond,
       9.60,
       10.44},
      {"ablation +XPU",
       "oneplus12",
       "bamboo-7b",
       "powerinfer2",
       {},
       "",
       0,
       0.5,
       Metric::kTokensPerSecond,
       11.07,
       10.44},
      // (d) neuron-cache hit rate of the ablation's cache step.
      {"ablation hit rate",
       "oneplus12",
       "bamboo-7b",
       "powerinfer2",
       {},
       "",
       0,
       0.5,
       Metric::kHitRate,
       0.95,
       0.895},
  };
}

TEST(DevTargets, SimulatorMatchesTheRecordedTable) {
  std::printf("%-38s %10s %10s %8s\n", "target", "published", "simulated", "error");
  for (const Target& t : Targets()) {
    const double got = Measure(t);
    std::printf("%-38s %10.3f %10.3f %+7.1f%%\n", t.name, t.published, got,
                100 * (got / t.published - 1));
    EXPECT_NEAR(got, t.recorded, 0.03 * t.recorded) << t.name;
  }
}

}  // namespace
}  // namespace sparseflash
