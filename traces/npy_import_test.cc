#include "traces/npy_import.h"

#include <fstream>

#include "gtest/gtest.h"
#include "traces/test_util.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

// Writes a version-1 .npy bool array of shape (rows, cols).
std::string WriteNpy(const std::string& name, int rows, int cols, const std::vector<uint8_t>& v) {
  std::string path = testing::TempPath(name);
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = header.size();
  out.write(reinterpret_cast<char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(v.data()), v.size());
  return path;
}

TEST(NpyImport, MasksBecomeIdLists) {
  TraceModelShape shape{"toy", 2, 3, 1, 1, false};
  std::string l0 = WriteNpy("l0.npy", 2, 3, {1, 0, 1, 0, 0, 0});
  std::string l1 = WriteNpy("l1.npy", 2, 3, {0, 1, 0, 1, 1, 1});
  std::string out = testing::TempPath("npy.trace");
  ASSERT_TRUE(ImportNpyMasks({l0, l1}, shape, {}, out).ok());
  auto reader = TraceReader::Open(out);
  ASSERT_TRUE(reader.ok());
  std::vector<TokenActivations> tokens;
  ASSERT_TRUE(ForEachToken(**reader, [&](const TokenActivations& t) { tokens.push_back(t); }).ok());
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].layers[0].experts[0].active, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(tokens[1].layers[1].experts[0].active, (std::vector<uint32_t>{0, 1, 2}));
}

TEST(NpyImport, WrongWidthNamesFile) {
  TraceModelShape shape{"toy", 1, 4, 1, 1, false};
  std::string l0 = WriteNpy("w.npy", 1, 3, {1, 0, 1});
  absl::Status s = ImportNpyMasks({l0}, shape, {}, testing::TempPath("w.trace"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(l0), std::string::npos);
}

TEST(NpyImport, LayerCountMustMatch) {
  TraceModelShape shape{"toy", 2, 3, 1, 1, false};
  std::string l0 = WriteNpy("c.npy", 1, 3, {1, 0, 1});
  EXPECT_FALSE(ImportNpyMasks({l0}, shape, {}, testing::TempPath("c.trace")).ok());
}

}  // namespace
}  // namespace sparseflash
