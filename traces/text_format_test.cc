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
  std::ostringstream out;
  ASSERT_TRUE(ExportTextTrace(**reader, out).ok());
  std::string text = out.str();
  EXPECT_NE(text.find("A 0 0 1 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("A 0 1\n"), std::string::npos);
  EXPECT_NE(text.find("A 1 0 4\n"), std::string::npos);
  EXPECT_NE(text.find("A 1 1 2 9\n"), std::string::npos);
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
