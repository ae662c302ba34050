#include "traces/read_ahead_generator.h"

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
TEST(ReadAheadGenerator, YieldsTheGeneratorsTokensThenTheEnd) {
  const ModelSpec m = NarrowMixtral();
  const GeneratorOptions options{.seed = 3, .tokens = 10};
  for (int ahead : {1, 3}) {
    ReadAheadGenerator source(m, options, ahead);
    TraceGenerator expected(m, options);
    for (uint64_t t = 0; t < options.tokens; ++t) {
      const TokenActivations* got = source.Next();
      ASSERT_NE(got, nullptr) << "token " << t;
      TokenActivations want;
      ASSERT_TRUE(expected.Next(&want));
      EXPECT_EQ(got->token, t);
      ASSERT_EQ(got->layers.size(), want.layers.size());
      for (size_t l = 0; l < want.layers.size(); ++l) {
        ASSERT_EQ(got->layers[l].experts.size(), want.layers[l].experts.size());
        for (size_t e = 0; e < want.layers[l].experts.size(); ++e) {
          EXPECT_EQ(got->layers[l].experts[e].expert, want.layers[l].experts[e].expert);
          EXPECT_EQ(got->layers[l].experts[e].predicted, want.layers[l].experts[e].predicted);
          EXPECT_EQ(got->layers[l].experts[e].active, want.layers[l].experts[e].active);
        }
      }
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(source.Next(), nullptr);
    }
  }
}

// A reader that stops early: the source ends its generator thread when destroyed.
TEST(ReadAheadGenerator, StopsWhenTheReaderStopsEarly) {
  const ModelSpec m = NarrowMixtral();
  ReadAheadGenerator source(m, {.seed = 3, .tokens = 1000000}, 2);
  const TokenActivations* first = source.Next();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->token, 0u);
}

// Any producer: its tokens in order, then its error, on that call and every
// call after (the producer is not asked again).
TEST(ReadAhead, YieldsTheProducersTokensThenItsError) {
  int calls = 0;
  ReadAhead source(
      [&calls](TokenActivations* token) -> absl::StatusOr<bool> {
        if (calls == 5) return absl::DataLossError("token 5 is damaged");
        token->token = calls++;
        return true;
      },
      2);
  for (uint64_t t = 0; t < 5; ++t) {
    absl::StatusOr<const TokenActivations*> got = source.Next();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_NE(*got, nullptr);
    EXPECT_EQ((*got)->token, t);
  }
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<const TokenActivations*> got = source.Next();
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status(), absl::DataLossError("token 5 is damaged"));
  }
  EXPECT_EQ(calls, 5);
}

}  // namespace
}  // namespace sparseflash
