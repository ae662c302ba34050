#include "engine/token_source.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/sparse_ffn.h"
#include "gtest/gtest.h"
#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/test_util.h"

namespace sparseflash {
namespace {

// A generated trace file of `tokens` tokens (each token's sets differ).
std::string GeneratedTraceFile(const std::string& name, uint64_t tokens) {
  absl::StatusOr<ModelSpec> model = LoadModel("tinystories-relu-260k");
  EXPECT_TRUE(model.ok()) << model.status();
  const std::string path = testing::TempPath(name);
  EXPECT_TRUE(WriteGeneratedTrace(*model, {.seed = 5, .tokens = tokens}, path, nullptr,
                                  /*overwrite=*/true)
                  .ok());
  return path;
}

// Every token of `source` until its end or error, copied, and how it ended.
std::pair<std::vector<TokenActivations>, absl::Status> ReadAll(TokenSource& source) {
  std::vector<TokenActivations> tokens;
  while (true) {
    absl::StatusOr<const TokenActivations*> token = source.Next();
    if (!token.ok()) return {tokens, token.status()};
    if (*token == nullptr) return {tokens, absl::OkStatus()};
    tokens.push_back(**token);
  }
}

std::vector<uint64_t> BitsOf(const std::vector<uint32_t>& ids) {
  std::vector<uint64_t> bits;
  MarkIds(ids, &bits);
  return bits;
}

// Decoded ahead on a thread, the file's tokens are the plain reader's, and
// each set carries the bits of its own ids, not of the token its slot held
// before (more tokens than slots, and every token's sets differ).
TEST(TraceFileReadAhead, YieldsTheFilesTokensEachWithItsOwnBits) {
  const std::string path = GeneratedTraceFile("read_ahead.trace", 24);
  absl::StatusOr<std::unique_ptr<TokenSource>> plain = OpenTraceSource(path);
  absl::StatusOr<std::unique_ptr<TokenSource>> ahead = OpenTraceSourceReadAhead(path);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(ahead.ok()) << ahead.status();
  EXPECT_EQ((*ahead)->header().tokens, (*plain)->header().tokens);
  auto [want, want_end] = ReadAll(**plain);
  auto [got, got_end] = ReadAll(**ahead);
  ASSERT_TRUE(want_end.ok()) << want_end;
  ASSERT_TRUE(got_end.ok()) << got_end;
  ASSERT_EQ(got.size(), 24u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < got.size(); ++t) {
    ASSERT_EQ(got[t].layers.size(), want[t].layers.size());
    for (size_t l = 0; l < got[t].layers.size(); ++l) {
      ASSERT_EQ(got[t].layers[l].experts.size(), want[t].layers[l].experts.size());
      for (size_t e = 0; e < got[t].layers[l].experts.size(); ++e) {
        const NeuronSet &g = got[t].layers[l].experts[e], &w = want[t].layers[l].experts[e];
        EXPECT_EQ(g.active, w.active) << "token " << t << " layer " << l;
        EXPECT_EQ(g.predicted, w.predicted);
        EXPECT_EQ(g.gate_only, w.gate_only);
        ASSERT_TRUE(g.bits.present) << "token " << t << " layer " << l;
        EXPECT_EQ(g.bits.active, BitsOf(g.active)) << "token " << t << " layer " << l;
        EXPECT_EQ(g.bits.predicted, BitsOf(g.predicted)) << "token " << t << " layer " << l;
        EXPECT_EQ(g.bits.gate_only, BitsOf(g.gate_only)) << "token " << t << " layer " << l;
      }
    }
  }
}

// A file cut short: the read-ahead source yields the tokens before the damage,
// then the plain reader's error (naming the file), and again on the next call.
TEST(TraceFileReadAhead, ReportsTheFilesErrorAfterTheTokensBeforeIt) {
  const std::string path = GeneratedTraceFile("read_ahead_cut.trace", 40);
  const std::string bytes = testing::FileBytes(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() * 3 / 4);
  absl::StatusOr<std::unique_ptr<TokenSource>> plain = OpenTraceSource(path);
  absl::StatusOr<std::unique_ptr<TokenSource>> ahead = OpenTraceSourceReadAhead(path);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(ahead.ok()) << ahead.status();
  auto [want, want_end] = ReadAll(**plain);
  auto [got, got_end] = ReadAll(**ahead);
  ASSERT_FALSE(want_end.ok());
  EXPECT_EQ(got_end, want_end);
  EXPECT_NE(got_end.message().find(path), std::string::npos) << got_end;
  EXPECT_EQ(got.size(), want.size());
  EXPECT_LT(got.size(), 40u);
  EXPECT_EQ((*ahead)->Next().status(), want_end);
}

// A file that is not there fails at open, as the plain reader does.
// A trace held in memory counts its bytes; past a budget it is refused as
// ResourceExhausted, generated or read from a file alike.
TEST(TokenTrace, CountsItsBytesAndRefusesToGrowPastABudget) {
  absl::StatusOr<ModelSpec> model = LoadModel("tinystories-relu-260k");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::shared_ptr<const TokenTrace>> whole = GenerateTokenTrace(*model, 5, 6);
  ASSERT_TRUE(whole.ok()) << whole.status();
  int64_t sum = 0;
  for (const TokenActivations& t : (*whole)->tokens) sum += TokenBytes(t);
  EXPECT_GT(sum, 0);
  EXPECT_EQ((*whole)->bytes, sum);
  EXPECT_TRUE(GenerateTokenTrace(*model, 5, 6, sum).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(GenerateTokenTrace(*model, 5, 6, sum - 1).status()));
  const std::string path = GeneratedTraceFile("budget.trace", 6);
  absl::StatusOr<std::shared_ptr<const TokenTrace>> read = ReadTokenTrace(path, 6);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_GT((*read)->bytes, 0);
  EXPECT_TRUE(absl::IsResourceExhausted(ReadTokenTrace(path, 6, (*read)->bytes - 1).status()));
}

TEST(TraceFileReadAhead, MissingFileFailsAtOpen) {
  const std::string path = testing::TempPath("no_such.trace");
  std::filesystem::remove(path);
  absl::StatusOr<std::unique_ptr<TokenSource>> ahead = OpenTraceSourceReadAhead(path);
  ASSERT_FALSE(ahead.ok());
  EXPECT_EQ(ahead.status(), OpenTraceSource(path).status());
}

}  // namespace
}  // namespace sparseflash
