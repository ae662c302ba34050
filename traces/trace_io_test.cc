#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/test_util.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

using testing::DenseToken;
using testing::FileBytes;
using testing::TempPath;
using testing::TinyHeader;
using testing::WriteTrace;

std::vector<TokenActivations> ReadAll(const std::string& path) {
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::vector<TokenActivations> out;
  EXPECT_TRUE(ForEachToken(**reader, [&](const TokenActivations& t) { out.push_back(t); }).ok());
  return out;
}

TEST(TraceIo, RoundTripsIdsAndHeader) {
  std::string path = TempPath("roundtrip.trace");
  TraceHeader h = TinyHeader(2, 10);
  h.provenance.generator = "hand";
  h.provenance.seed = 7;
  ASSERT_TRUE(
      WriteTrace(path, h, {DenseToken(0, {{0, 3, 9}, {}}), DenseToken(1, {{1}, {2, 4, 5, 6}})})
          .ok());
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->header().tokens, 2u);
  EXPECT_EQ((*reader)->header().provenance.seed, 7u);
  EXPECT_EQ((*reader)->header().model, h.model);
  std::vector<TokenActivations> tokens = ReadAll(path);
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].layers[0].experts[0].active, (std::vector<uint32_t>{0, 3, 9}));
  EXPECT_TRUE(tokens[0].layers[1].experts[0].active.empty());
  EXPECT_EQ(tokens[1].layers[1].experts[0].active, (std::vector<uint32_t>{2, 4, 5, 6}));
}

// A token read into again holds the new token's ids and no bitsets of the old one.
TEST(TraceIo, AReusedTokenKeepsNoBitsOfTheOneBefore) {
  std::string path = TempPath("reused.trace");
  ASSERT_TRUE(
      WriteTrace(path, TinyHeader(1, 10), {DenseToken(0, {{1, 2}}), DenseToken(1, {{7}})}).ok());
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  TokenActivations token;
  ASSERT_TRUE(*(*reader)->Next(&token));
  NeuronSet& set = token.layers[0].experts[0];
  set.bits = NeuronBits{.present = true, .active = {0b110}};  // as a consumer attaches them
  ASSERT_TRUE(*(*reader)->Next(&token));
  EXPECT_EQ(token.layers[0].experts[0].active, (std::vector<uint32_t>{7}));
  EXPECT_FALSE(token.layers[0].experts[0].bits.present);
}

TEST(TraceIo, ManyFramesStreamBack) {
  std::string path = TempPath("frames.trace");
  TraceHeader h = TinyHeader(1, 5000);
  std::vector<TokenActivations> tokens;
  for (uint64_t t = 0; t < 400; ++t) {
    std::vector<uint32_t> ids;
    for (uint32_t i = t % 3; i < 5000; i += 3) ids.push_back(i);
    tokens.push_back(DenseToken(t, {ids}));
  }
  ASSERT_TRUE(WriteTrace(path, h, tokens).ok());
  std::vector<TokenActivations> back = ReadAll(path);
  ASSERT_EQ(back.size(), tokens.size());
  EXPECT_EQ(back[399].layers[0].experts[0].active, tokens[399].layers[0].experts[0].active);
}

TEST(TraceIo, AppendOutOfOrderFails) {
  auto writer = TraceWriter::Create(TempPath("order.trace"), TinyHeader());
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE((*writer)->Append(DenseToken(3, {{1}, {1}})).ok());
}

TEST(TraceIo, UnfinishedWriterLeavesNoFileAndKeepsOldOne) {
  std::string path = TempPath("keep.trace");
  ASSERT_TRUE(WriteTrace(path, TinyHeader(), {DenseToken(0, {{1}, {2}})}).ok());
  {
    auto writer = TraceWriter::Create(path, TinyHeader());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(DenseToken(0, {{5}, {6}})).ok());
    // Destroyed without Finish(): as if interrupted.
  }
  std::vector<TokenActivations> tokens = ReadAll(path);
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].layers[0].experts[0].active, (std::vector<uint32_t>{1}));
}

TEST(TraceIo, RefusesOverwriteWhenAsked) {
  std::string path = TempPath("noover.trace");
  ASSERT_TRUE(WriteTrace(path, TinyHeader(), {}).ok());
  EXPECT_FALSE(TraceWriter::Create(path, TinyHeader(), {.overwrite = false}).ok());
}

TEST(TraceIo, SameSeedSameBytes) {
  ModelSpec m = *ModelCatalog::Builtin().Find("turbosparse-mixtral-47b");
  m.layers = 2;
  m.generator.layer_active_ratio.resize(2);
  m.generator.layer_skew.resize(2);
  std::string a = TempPath("seed_a.trace"), b = TempPath("seed_b.trace"),
              c = TempPath("seed_c.trace");
  ASSERT_TRUE(WriteGeneratedTrace(m, {.seed = 3, .tokens = 20}, a).ok());
  ASSERT_TRUE(WriteGeneratedTrace(m, {.seed = 3, .tokens = 20}, b).ok());
  ASSERT_TRUE(WriteGeneratedTrace(m, {.seed = 4, .tokens = 20}, c).ok());
  EXPECT_TRUE(FileBytes(a) == FileBytes(b));
  EXPECT_FALSE(FileBytes(a) == FileBytes(c));
}

}  // namespace
}  // namespace sparseflash
