// Cache policies through whole simulations on recorded traces.
#include <map>
#include <string>

#include "devices/device_catalog.h"
#include "engine/run_summary.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "tests/repo_data.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/test_util.h"
#include "traces/text_format.h"

namespace sparseflash {
namespace {

// LFU and SIEVE coincide on recorded traces too, not only on generated ones
// (the mechanism: NeuronCache.LfuAndSieveCoincideWhenATokensMissesOutgrowTheRoomLeft):
// on the TinyStories recordings every budget gives them the same hits, while
// LRU's differ. The hot neurons come from the other recording.
TEST(Simulate, LfuAndSieveCoincideOnTheRecordedTinyStoriesTraces) {
  const ModelSpec model = *LoadModel("tinystories-relu-260k");
  const std::string trace = testing::TempPath("tinystories_golden.trace");
  const std::string profile = testing::TempPath("tinystories_golden_profile.trace");
  for (const auto& [name, path] :
       {std::pair{"greedy_from_bos", trace}, std::pair{"greedy_prompt_big_dog", profile}}) {
    ASSERT_TRUE(ImportTextTrace(testing::RepoData(std::string("tinystories-relu-260k/golden/") +
                                                  name + ".trace.txt"),
                                ShapeOf(model), {}, path, {.overwrite = true})
                    .ok());
  }
  bool lru_differs = false;
  for (double share : {0.2, 0.3, 0.5}) {
    std::map<std::string, double> hits;
    for (const char* policy : {"lfu", "sieve", "lru"}) {
      SimulationConfig c;
      c.device = *LoadDevice("oneplus12");
      c.model = model;
      c.strategy = "powerinfer2";
      c.trace_path = trace;
      c.profile = profile;
      c.tokens = 64;
      c.ffn_resident = share;
      c.policy = policy;
      absl::StatusOr<SimulationResult> r = Simulate(c);
      ASSERT_TRUE(r.ok()) << policy << ": " << r.status();
      hits[policy] = Summarize(r->record).hit_rate;
    }
    EXPECT_EQ(hits["lfu"], hits["sieve"]) << "FFN share " << share;
    lru_differs |= hits["lru"] != hits["lfu"];
  }
  EXPECT_TRUE(lru_differs) << "the trace must tell some policies apart";
}

}  // namespace
}  // namespace sparseflash
