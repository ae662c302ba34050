// The real TinyStories model's forward pass against the golden outputs in
// data/: exact tokens and text, and at least 99 % of the active sets.
#include "engine/tiny/tiny_model.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_split.h"
#include "engine/tiny/tokenizer.h"
#include "gtest/gtest.h"
#include "tests/repo_data.h"

namespace sparseflash {
namespace {

using testing::RepoData;

std::string Golden(const std::string& name) {
  std::ifstream in(RepoData("tinystories-relu-260k/golden/" + name));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct GoldenRun {
  std::vector<std::pair<int, int>> tokens;                 // (token, next) per position
  std::vector<std::vector<std::vector<uint32_t>>> active;  // [pos][layer]
};

GoldenRun ParseTrace(const std::string& text) {
  GoldenRun g;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f[0] == "T") g.tokens.push_back({std::stoi(f[2]), std::stoi(f[3])});
    if (f[0] == "A") {
      const size_t pos = std::stoul(f[1]);
      if (g.active.size() <= pos) g.active.resize(pos + 1);
      std::vector<uint32_t> ids;
      for (size_t i = 3; i < f.size(); ++i) ids.push_back(std::stoul(f[i]));
      g.active[pos].push_back(ids);
    }
  }
  return g;
}

class TinyGolden : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(TinyGolden, DenseForwardReproducesTheGoldenRun) {
  auto [name, prompt] = GetParam();
  absl::StatusOr<TinyModel> model =
      TinyModel::Load(RepoData("tinystories-relu-260k/model_qint80.bin"));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Tokenizer> tok =
      Tokenizer::Load(RepoData("tinystories-relu-260k/tok1024.bin"), model->config().vocab);
  ASSERT_TRUE(tok.ok()) << tok.status();
  GoldenRun golden = ParseTrace(Golden(std::string(name) + ".trace.txt"));
  std::vector<int> prompt_tokens = tok->Encode(prompt);
  TinyForward fwd(*model);
  int token = prompt_tokens[0];
  std::string text;
  size_t same = 0, total = 0;
  for (int pos = 0; pos < model->config().seq_len; ++pos) {
    std::vector<std::vector<uint32_t>> active;
    int next = ArgMax(fwd.DenseStep(token, pos, &active));
    if (pos + 1 < static_cast<int>(prompt_tokens.size())) next = prompt_tokens[pos + 1];
    ASSERT_LT(size_t(pos), golden.tokens.size());
    EXPECT_EQ(token, golden.tokens[pos].first) << "position " << pos;
    EXPECT_EQ(next, golden.tokens[pos].second) << "position " << pos;
    for (size_t l = 0; l < active.size(); ++l) {
      const std::vector<uint32_t>& want = golden.active[pos][l];
      total += want.size();
      for (uint32_t id : want) same += std::count(active[l].begin(), active[l].end(), id);
    }
    text += tok->Decode(token, next);
    token = next;
  }
  std::printf("%s: %zu of %zu golden active entries reproduced\n", name, same, total);
  EXPECT_GE(double(same) / total, 0.99);
  std::string want = Golden(std::string(name) + ".text.txt");
  while (!want.empty() && want.back() == '\n') want.pop_back();
  EXPECT_EQ(text, want);
}

INSTANTIATE_TEST_SUITE_P(Golden, TinyGolden,
                         ::testing::Values(std::pair{"greedy_from_bos", ""},
                                           std::pair{"greedy_prompt_big_dog",
                                                     "Once upon a time, there was a big dog"}),
                         [](const auto& info) { return std::string(info.param.first); });

TEST(TinyModel, DamagedFilesNameTheFileAndField) {
  std::string data;
  {
    std::ifstream in(RepoData("tinystories-relu-260k/model_qint80.bin"), std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string path = ::testing::TempDir() + "/bad_model.bin";
  auto write = [&](const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  write(data.substr(0, data.size() - 100));
  absl::StatusOr<TinyModel> m = TinyModel::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(path), std::string::npos);
  std::string bad = data;
  bad[0] ^= 1;
  write(bad);
  m = TinyModel::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("magic"), std::string::npos);
  write(data + "xx");
  m = TinyModel::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("does not match"), std::string::npos);
  // A NaN where the first attention norm weight is.
  bad = data;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bad.data() + TinyModel::kHeaderBytes, &nan, sizeof nan);
  write(bad);
  m = TinyModel::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("attention norms value 0"), std::string::npos)
      << m.status();
  EXPECT_NE(m.status().message().find("not finite"), std::string::npos) << m.status();
}

// Found by fuzz_tiny_model: finite weights can overflow an activation to NaN,
// which must quantize to 0 instead of an undefined float-to-int8 cast.
TEST(TinyModel, ANaNActivationQuantizesToZero) {
  std::vector<float> v(8, 1.0f);
  v[3] = std::numeric_limits<float>::quiet_NaN();
  v[5] = std::numeric_limits<float>::infinity();
  const QVector q = Quantize(v, 8);
  EXPECT_EQ(q.q[3], 0);
  EXPECT_EQ(q.q[5], 127);
  EXPECT_EQ(q.q[0], 127);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// Found by fuzz_tiny_model: a header whose layers x dim overflows 32 bits must be
// refused (the sizes are computed in 64 bits), under UBSan too.
TEST(TinyModel, AHugeShapeIsRefusedWithoutOverflow) {
  std::ifstream in("fuzz/corpus/tiny_model/regression-layers-times-dim", std::ios::binary);
  ASSERT_TRUE(in) << "run the tests from the repository root";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<TinyModel> m = TinyModel::Parse(bytes, "regression.bin");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("regression.bin"), std::string::npos) << m.status();
}

}  // namespace
}  // namespace sparseflash
