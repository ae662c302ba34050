#include "traces/text_format.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "traces/test_util.h"

namespace sparseflash {
namespace {

using testing::TempPath;

std::string Write(const std::string& name, const std::string& text) {
  std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(TextFormat, ImportExportRoundTrip) {
  TraceModelShape shape{"toy", 2, 10, 1, 1, false};
  std::string in = Write("in.txt", "# comment\nA 0 0 3 1\nA 0 1\nT 0 1 5\nA 1 1 9 2\nA 1 0 4\n");
  std::string trace = TempPath("text.trace");
  ASSERT_TRUE(ImportTextTrace(in, shape, {}, trace).ok());
  auto reader = TraceReader::Open(trace);
  ASSERT_TRUE(reader.ok());
  std::string text;
  ASSERT_TRUE(ExportTextTrace(**reader, [&](absl::string_view s) {
                text.append(s.data(), s.size());
                return absl::OkStatus();
              }).ok());
  EXPECT_NE(text.find("A 0 0 1 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("A 0 1\n"), std::string::npos);
  EXPECT_NE(text.find("A 1 0 4\n"), std::string::npos);
  EXPECT_NE(text.find("A 1 1 2 9\n"), std::string::npos);
}

// A layer without lines had no active neurons: it is listed, empty, so every
// token carries every layer (the reader requires it).
TEST(TextFormat, LayerWithoutLinesIsImportedEmpty) {
  TraceModelShape shape{"toy", 3, 10, 1, 1, false};
  std::string in = Write("sparse.txt", "A 0 2 5\nA 1 0 1\n");
  std::string trace = TempPath("sparse.trace");
  ASSERT_TRUE(ImportTextTrace(in, shape, {}, trace).ok());
  auto reader = TraceReader::Open(trace);
  ASSERT_TRUE(reader.ok());
  std::vector<TokenActivations> tokens;
  ASSERT_TRUE(ForEachToken(**reader, [&](const TokenActivations& t) { tokens.push_back(t); }).ok());
  ASSERT_EQ(tokens.size(), 2u);
  ASSERT_EQ(tokens[0].layers.size(), 3u);
  EXPECT_TRUE(tokens[0].layers[0].experts[0].active.empty());
  EXPECT_EQ(tokens[0].layers[2].experts[0].active, (std::vector<uint32_t>{5}));
  EXPECT_EQ(tokens[1].layers[0].experts[0].active, (std::vector<uint32_t>{1}));
}

TEST(TextFormat, ExportStopsAtTheSinksError) {
  TraceModelShape shape{"toy", 1, 10, 1, 1, false};
  std::string in = Write("two.txt", "A 0 0 1\nA 1 0 2\n");
  std::string trace = TempPath("two.trace");
  ASSERT_TRUE(ImportTextTrace(in, shape, {}, trace).ok());
  auto reader = TraceReader::Open(trace);
  ASSERT_TRUE(reader.ok());
  int calls = 0;
  absl::Status s = ExportTextTrace(**reader, [&](absl::string_view) {
    return ++calls == 2 ? absl::ResourceExhaustedError("disk full") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_EQ(calls, 2);
}

TEST(TextFormat, BadIdNamesFileAndLine) {
  TraceModelShape shape{"toy", 2, 10, 1, 1, false};
  std::string in = Write("bad.txt", "A 0 0 1\nA 0 1 10\n");
  absl::Status s = ImportTextTrace(in, shape, {}, TempPath("bad.trace"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(in + ":2"), std::string::npos) << s.message();
}

TEST(TextFormat, GapInTokensIsAnError) {
  TraceModelShape shape{"toy", 1, 10, 1, 1, false};
  std::string in = Write("gap.txt", "A 0 0 1\nA 2 0 1\n");
  EXPECT_FALSE(ImportTextTrace(in, shape, {}, TempPath("gap.trace")).ok());
}

}  // namespace
}  // namespace sparseflash
