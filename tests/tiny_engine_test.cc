// The real TinyStories model through the engine on the real Env: the offloaded,
// sparse engine prints exactly the golden text for every strategy and for every
// budget from all FFN bundles cached to none, reads with O_DIRECT (checked against
// the kernel's count), and fails cleanly on an I/O error.
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/real/tiny_generate.h"
#include "engine/real/tiny_record.h"
#include "gtest/gtest.h"
#include "tests/repo_data.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

using testing::RepoData;

struct Fixture {
  TinyModel model;
  Tokenizer tokenizer;
};

const Fixture& Tiny() {
  static const Fixture* f = [] {
    auto model = TinyModel::Load(RepoData("tinystories-relu-260k/model_qint80.bin"));
    auto tok = Tokenizer::Load(RepoData("tinystories-relu-260k/tok1024.bin"), 1024);
    EXPECT_TRUE(model.ok() && tok.ok());
    return new Fixture{*std::move(model), *std::move(tok)};
  }();
  return *f;
}

std::string GoldenText(const std::string& name) {
  std::ifstream in(RepoData("tinystories-relu-260k/golden/" + name + ".text.txt"));
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

TinyGenerateOptions Options(const std::string& strategy, double resident) {
  TinyGenerateOptions o;
  o.flash_file = ::testing::TempDir() + "/tiny.sfweights";
  o.strategy.strategy = strategy;
  o.strategy.ffn_resident = resident;
  return o;
}

class EveryBudget : public ::testing::TestWithParam<std::tuple<const char*, double>> {};

TEST_P(EveryBudget, OffloadedEngineMatchesTheGoldenText) {
  auto [strategy, resident] = GetParam();
  for (auto [name, prompt] :
       {std::pair{"greedy_from_bos", ""},
        std::pair{"greedy_prompt_big_dog", "Once upon a time, there was a big dog"}}) {
    TinyGenerateOptions o = Options(strategy, resident);
    o.prompt = prompt;
    absl::StatusOr<TinyGenerateResult> r = GenerateTiny(Tiny().model, Tiny().tokenizer, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->text, GoldenText(name)) << strategy << " at " << resident;
    EXPECT_EQ(r->record.tokens.size(), 64u);
    if (std::string(strategy) == "in_memory") {
      EXPECT_EQ(r->engine_read_bytes, 0);
    } else {
      EXPECT_GT(r->engine_read_bytes, 0);
      // O_DIRECT: every byte the engine read came from storage, not the page cache.
      if (r->notice.find("O_DIRECT") == std::string::npos && r->kernel_read_bytes >= 0) {
        EXPECT_GE(r->kernel_read_bytes, r->engine_read_bytes);
      }
    }
    if (resident == 0 && std::string(strategy) != "in_memory") {
      EXPECT_EQ(r->cache_hits, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndBudgets, EveryBudget,
                         ::testing::Combine(::testing::Values("powerinfer2", "llmflash", "llamacpp",
                                                              "in_memory"),
                                            ::testing::Values(1.0, 0.5, 0.1, 0.0)));

TEST(TinyEngine, MoreCacheReadsLess) {
  int64_t previous = INT64_MAX;
  for (double resident : {0.0, 0.25, 0.5, 1.0}) {
    absl::StatusOr<TinyGenerateResult> r =
        GenerateTiny(Tiny().model, Tiny().tokenizer, Options("powerinfer2", resident));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_LT(r->engine_read_bytes, previous) << resident;
    previous = r->engine_read_bytes;
  }
}

TEST(TinyEngine, PreadFallbackGivesTheSameText) {
  TinyGenerateOptions o = Options("powerinfer2", 0.1);
  o.io = "pread";
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(Tiny().model, Tiny().tokenizer, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->text, GoldenText("greedy_from_bos"));
}

TEST(TinyEngine, ReadErrorStopsWithAClearError) {
  TinyGenerateOptions o = Options("powerinfer2", 0.0);
  o.fail_nth_read = 5;
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(Tiny().model, Tiny().tokenizer, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("flash read failed"), std::string::npos) << r.status();
}

TEST(TinyEngine, BudgetBelowTheResidentSetNamesBothSizes) {
  TinyGenerateOptions o = Options("powerinfer2", -1);
  o.strategy.memory_bytes = 1000;
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(Tiny().model, Tiny().tokenizer, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("resident set"), std::string::npos) << r.status();
}

// A llama2.c int8 file of the given shape: unit norms, small pseudo-random
// weights with one scale per group.
std::string SyntheticModelFile(const TinyConfig& c) {
  std::string out(TinyModel::kHeaderBytes, '\0');
  const uint32_t magic = 0x616b3432;
  const int32_t version = 2;
  const int32_t shape[7] = {c.dim, c.hidden, c.layers, c.heads, c.kv_heads, c.vocab, c.seq_len};
  std::memcpy(out.data(), &magic, 4);
  std::memcpy(out.data() + 4, &version, 4);
  std::memcpy(out.data() + 8, shape, 28);
  out[36] = 1;
  std::memcpy(out.data() + 37, &c.group, 4);
  auto floats = [&out](int64_t n, float v) {
    for (int64_t i = 0; i < n; ++i) out.append(reinterpret_cast<const char*>(&v), 4);
  };
  uint32_t state = 12345;
  auto tensor = [&](int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < rows * cols; ++i) {
      state = state * 1664525u + 1013904223u;
      out.push_back(static_cast<char>(static_cast<int>(state >> 24) - 128));
    }
    for (int64_t g = 0; g < rows * cols / c.group; ++g) floats(1, 0.002f * (1 + g % 7));
  };
  floats(2 * int64_t{c.layers} * c.dim + c.dim, 1.0f);
  tensor(c.vocab, c.dim);
  // wq, wk, wv, wo, w1, w2, w3, each layer by layer.
  const std::pair<int, int> shapes[] = {{c.dim, c.dim},    {c.dim, c.dim},    {c.dim, c.dim},
                                        {c.dim, c.dim},    {c.hidden, c.dim}, {c.dim, c.hidden},
                                        {c.hidden, c.dim}};
  for (auto [rows, cols] : shapes) {
    for (int l = 0; l < c.layers; ++l) tensor(rows, cols);
  }
  return out;
}

// A model whose bundles are wider than a 4 KiB page (dim 704: 4,932 bytes with
// two scale groups per row) decodes through the offloaded engine exactly as the
// dense reference does: every buffer is sized from the header it matched.
TEST(TinyEngine, BundlesWiderThanAPageDecodeAsTheDenseReference) {
  const TinyConfig c{.dim = 704, .hidden = 352, .layers = 1, .heads = 4, .kv_heads = 4,
                     .vocab = 300, .seq_len = 6, .shared_classifier = true, .group = 352};
  const std::string bytes = SyntheticModelFile(c);
  ASSERT_EQ(static_cast<int64_t>(bytes.size()), TinyModel::ExpectedFileBytes(c));
  absl::StatusOr<TinyModel> model = TinyModel::Parse(bytes, "wide.bin");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(model->bundle_bytes(), 4096);
  EXPECT_EQ(model->bundle_stride() % 4096, 0);
  EXPECT_GE(model->bundle_stride(), model->bundle_bytes());
  std::string tokens_file(4, '\0');
  const int32_t max_len = 8;
  std::memcpy(tokens_file.data(), &max_len, 4);
  for (int i = 0; i < c.vocab; ++i) {
    const std::string piece = absl::StrCat("t", i);
    const float score = 0;
    const int32_t len = static_cast<int32_t>(piece.size());
    tokens_file.append(reinterpret_cast<const char*>(&score), 4);
    tokens_file.append(reinterpret_cast<const char*>(&len), 4);
    tokens_file += piece;
  }
  absl::StatusOr<Tokenizer> tok = Tokenizer::Parse(tokens_file, c.vocab, "wide.tok");
  ASSERT_TRUE(tok.ok()) << tok.status();
  TinyForward dense(*model);
  std::vector<int> want = {Tokenizer::kBos};
  for (int pos = 0; pos < c.seq_len; ++pos) want.push_back(ArgMax(dense.DenseStep(want.back(), pos, nullptr)));
  for (const char* strategy : {"powerinfer2", "llamacpp"}) {
    TinyGenerateOptions o = Options(strategy, 0.25);
    absl::StatusOr<TinyGenerateResult> r = GenerateTiny(*model, *tok, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->output.tokens, want) << strategy;
    EXPECT_GT(r->engine_read_bytes, 0);
    EXPECT_EQ(r->engine_read_bytes % model->bundle_stride(), 0);
  }
}

// trace record: the recorded trace holds the golden active sets.
TEST(TinyEngine, RecordedTraceReproducesTheGoldenActivations) {
  TinyGenerateOptions o = Options("powerinfer2", 0.3);
  o.prompt = "Once upon a time, there was a big dog";
  absl::StatusOr<TinyGenerateResult> r = GenerateTiny(Tiny().model, Tiny().tokenizer, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string path = ::testing::TempDir() + "/recorded.trace";
  ASSERT_TRUE(WriteTinyTrace(Tiny().model, *r, o.prompt, path, /*overwrite=*/true).ok());
  EXPECT_FALSE(WriteTinyTrace(Tiny().model, *r, o.prompt, path, /*overwrite=*/false).ok());
  std::ifstream golden(RepoData("tinystories-relu-260k/golden/greedy_prompt_big_dog.trace.txt"));
  std::vector<std::vector<std::vector<uint32_t>>> want;
  std::string line;
  while (std::getline(golden, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.empty() || f[0] != "A") continue;
    const size_t pos = std::stoul(f[1]);
    if (want.size() <= pos) want.resize(pos + 1);
    std::vector<uint32_t> ids;
    for (size_t i = 3; i < f.size(); ++i) ids.push_back(std::stoul(f[i]));
    want[pos].push_back(ids);
  }
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  size_t same = 0, total = 0, extra = 0;
  TokenActivations t;
  while (*(*reader)->Next(&t)) {
    for (const LayerActivations& l : t.layers) {
      const std::vector<uint32_t>& got = l.experts[0].active;
      const std::vector<uint32_t>& exp = want.at(t.token).at(l.layer);
      total += exp.size();
      for (uint32_t id : exp) same += std::count(got.begin(), got.end(), id);
      extra += got.size() - std::min(got.size(), exp.size());
    }
  }
  EXPECT_EQ((*reader)->header().tokens, 64u);
  EXPECT_GE(double(same) / total, 0.99);
  EXPECT_LE(double(extra) / total, 0.01);
}

}  // namespace
}  // namespace sparseflash
