#include "engine/generator_source.h"

#include <vector>

#include "gtest/gtest.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

ModelSpec NarrowMixtral() {
  absl::StatusOr<ModelSpec> m = LoadModel("turbosparse-mixtral-47b");
  EXPECT_TRUE(m.ok()) << m.status();
  m->d_ffn = 512;
  return *m;
}

// The source runs the generator ahead on its own thread; the reader gets the
// generator's tokens in order, each intact while it holds it, then the end.
TEST(GeneratorSource, YieldsTheGeneratorsTokensThenTheEnd) {
  const ModelSpec m = NarrowMixtral();
  const GeneratorOptions options{.seed = 3, .tokens = 10};
  for (int ahead : {1, 3}) {
    GeneratorSource source(m, options, ahead);
    TraceGenerator expected(m, options);
    for (uint64_t t = 0; t < options.tokens; ++t) {
      absl::StatusOr<const TokenActivations*> got = source.Next();
      ASSERT_TRUE(got.ok());
      ASSERT_NE(*got, nullptr) << "token " << t;
      TokenActivations want;
      ASSERT_TRUE(expected.Next(&want));
      EXPECT_EQ((*got)->token, t);
      ASSERT_EQ((*got)->layers.size(), want.layers.size());
      for (size_t l = 0; l < want.layers.size(); ++l) {
        ASSERT_EQ((*got)->layers[l].experts.size(), want.layers[l].experts.size());
        for (size_t e = 0; e < want.layers[l].experts.size(); ++e) {
          EXPECT_EQ((*got)->layers[l].experts[e].expert, want.layers[l].experts[e].expert);
          EXPECT_EQ((*got)->layers[l].experts[e].predicted, want.layers[l].experts[e].predicted);
          EXPECT_EQ((*got)->layers[l].experts[e].active, want.layers[l].experts[e].active);
        }
      }
    }
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<const TokenActivations*> end = source.Next();
      ASSERT_TRUE(end.ok());
      EXPECT_EQ(*end, nullptr);
    }
  }
}

// A reader that stops early: the source ends its generator thread when destroyed.
TEST(GeneratorSource, StopsWhenTheReaderStopsEarly) {
  const ModelSpec m = NarrowMixtral();
  GeneratorSource source(m, {.seed = 3, .tokens = 1000000}, 2);
  absl::StatusOr<const TokenActivations*> first = source.Next();
  ASSERT_TRUE(first.ok());
  ASSERT_NE(*first, nullptr);
  EXPECT_EQ((*first)->token, 0u);
}

}  // namespace
}  // namespace sparseflash
