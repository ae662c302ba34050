// Real replay of a trace through the engine on this machine against the
// simulator for the same configuration: the same engine code must make the same
// decisions, so flash bytes per token and cache hits are identical; only time
// differs. Uses the small catalog model so it runs in a second.
#include "devices/device_catalog.h"
#include "engine/real/real_run.h"
#include "engine/run_summary.h"
#include "engine/weight_file.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

class ReplayMatchesSimulation : public ::testing::TestWithParam<const char*> {};

TEST_P(ReplayMatchesSimulation, SameDecisionsInBothWorlds) {
  ModelSpec model = *LoadModel("tinystories-relu-260k");
  const std::string weights = ::testing::TempDir() + "/tiny_replay.sfw";
  ASSERT_TRUE(WriteWeightFile(model, LayoutKind::kBundle, weights, true, nullptr).ok());
  RunSetupConfig rc{
      .model = model, .tokens = 24, .strategy = GetParam(), .ffn_resident = 0.3, .cpu_cores = 2};
  absl::StatusOr<RunSetup> setup = PrepareRun(rc);
  ASSERT_TRUE(setup.ok()) << setup.status();
  absl::StatusOr<RealRunResult> real = RunReal(*setup, model, {.weights_path = weights});
  ASSERT_TRUE(real.ok()) << real.status();

  SimulationConfig sc;
  sc.device = *LoadDevice("oneplus12");
  sc.device.cores = {sc.device.cores[0]};
  sc.device.cores[0].count = 2;
  sc.model = model;
  sc.strategy = GetParam();
  sc.ffn_resident = 0.3;
  sc.tokens = 24;
  absl::StatusOr<SimulationResult> sim = Simulate(sc);
  ASSERT_TRUE(sim.ok()) << sim.status();
  ASSERT_EQ(real->record.tokens.size(), sim->record.tokens.size());
  for (size_t t = 0; t < real->record.tokens.size(); ++t) {
    EXPECT_EQ(real->record.tokens[t].flash_bytes, sim->record.tokens[t].flash_bytes) << t;
    EXPECT_EQ(real->record.tokens[t].cache_hits, sim->record.tokens[t].cache_hits) << t;
  }
  EXPECT_EQ(real->engine_read_bytes, Summarize(sim->record).flash_bytes_per_token * 24);
  if (real->kernel_read_bytes >= 0 && real->notice.find("O_DIRECT") == std::string::npos) {
    EXPECT_GE(real->kernel_read_bytes, real->engine_read_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ReplayMatchesSimulation,
                         ::testing::Values("powerinfer2", "llmflash", "llamacpp"));

TEST(Replay, WeightFileOfAnotherModelIsRejected) {
  ModelSpec model = *LoadModel("tinystories-relu-260k");
  const std::string weights = ::testing::TempDir() + "/tiny_other.sfw";
  ASSERT_TRUE(WriteWeightFile(model, LayoutKind::kBundle, weights, true, nullptr).ok());
  ModelSpec other = *LoadModel("turbosparse-mistral-7b");
  RunSetupConfig rc{
      .model = other, .tokens = 2, .strategy = "powerinfer2", .ffn_resident = 0.5, .cpu_cores = 2};
  absl::StatusOr<RunSetup> setup = PrepareRun(rc);
  ASSERT_TRUE(setup.ok()) << setup.status();
  absl::StatusOr<RealRunResult> real = RunReal(*setup, other, {.weights_path = weights});
  ASSERT_FALSE(real.ok());
  EXPECT_NE(real.status().message().find(weights), std::string::npos) << real.status();
}

}  // namespace
}  // namespace sparseflash
