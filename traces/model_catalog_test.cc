#include "traces/model_catalog.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(ModelCatalog, HasEveryReferenceModel) {
  for (const char* name :
       {"turbosparse-mistral-7b", "turbosparse-mixtral-47b", "bamboo-7b", "prosparse-llama2-7b",
        "prosparse-llama2-13b", "qwen2-7b-relu", "mistral-7b", "opt-6.7b", "falcon-7b-relu",
        "persimmon-8b", "phi-2", "llama2-7b-fatrelu", "tinystories-relu-260k"}) {
    absl::StatusOr<ModelSpec> m = ModelCatalog::Builtin().Find(name);
    ASSERT_TRUE(m.ok()) << name;
    EXPECT_EQ(static_cast<int>(m->generator.layer_active_ratio.size()), m->layers) << name;
  }
}

TEST(ModelCatalog, UnknownModelListsKnownOnes) {
  absl::StatusOr<ModelSpec> m = ModelCatalog::Builtin().Find("gpt-5");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("opt-6.7b"), std::string::npos);
}

TEST(ModelCatalog, BadTextNamesSourceAndLine) {
  absl::StatusOr<ModelSpec> m = ModelCatalog::Parse("name: \"x\"\nlayers: oops\n", "my.textproto");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("my.textproto"), std::string::npos);
  EXPECT_NE(m.status().message().find("line 2"), std::string::npos);
}

TEST(ModelCatalog, ProfileMustMatchLayers) {
  absl::StatusOr<ModelSpec> m = ModelCatalog::Parse(
      "name: \"x\" layers: 2 d_model: 8 d_ffn: 16 heads: 1 kv_heads: 1 head_dim: 8 vocab: 10 "
      "generator { layer_active_ratio: [0.1] }",
      "x.textproto");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("layer_active_ratio"), std::string::npos);
}

// Thresholding the gate needs a gate: an up/down FFN with gate_threshold is
// refused by name, and the catalog's SiLU model is read with it.
TEST(ModelCatalog, GateThresholdNeedsAGatedFfn) {
  const std::string shape =
      "name: \"x\" layers: 1 d_model: 8 d_ffn: 16 heads: 1 kv_heads: 1 head_dim: 8 vocab: 10 "
      "generator { layer_active_ratio: [0.5] } gate_threshold: true ";
  absl::StatusOr<ModelSpec> up_down =
      ModelCatalog::Parse(shape + "ffn_type: UP_DOWN", "x.textproto");
  ASSERT_FALSE(up_down.ok());
  EXPECT_NE(up_down.status().message().find("gate_threshold"), std::string::npos);
  absl::StatusOr<ModelSpec> gated = ModelCatalog::Parse(shape + "ffn_type: GATED", "x.textproto");
  ASSERT_TRUE(gated.ok()) << gated.status();
  EXPECT_TRUE(gated->gate_threshold);
  EXPECT_TRUE(ModelCatalog::Builtin().Find("mistral-7b")->gate_threshold);
  EXPECT_FALSE(ModelCatalog::Builtin().Find("turbosparse-mistral-7b")->gate_threshold);
}

TEST(Quantization, ParsesNames) {
  Quantization q;
  ASSERT_TRUE(ParseQuantization("int4-g16", &q).ok());
  EXPECT_EQ(q.kind, QuantKind::kInt4);
  EXPECT_EQ(q.group_size, 16);
  ASSERT_TRUE(ParseQuantization("int8", &q).ok());
  EXPECT_EQ(q.group_size, 32);
  EXPECT_FALSE(ParseQuantization("int3", &q).ok());
}

}  // namespace
}  // namespace sparseflash
