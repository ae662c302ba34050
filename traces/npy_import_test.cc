#include "traces/npy_import.h"

#include <cstring>
#include <fstream>

#include "gtest/gtest.h"
#include "traces/test_util.h"
#include "traces/trace_reader.h"

namespace sparseflash {
namespace {

// Writes a version-1 .npy array of shape (rows, cols) with raw element bytes `v`.
std::string WriteNpy(const std::string& name, int64_t rows, int64_t cols,
                     const std::vector<uint8_t>& v, const std::string& descr = "|b1") {
  std::string path = testing::TempPath(name);
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
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
  absl::Status s = ImportNpyMasks({l0}, shape, {}, testing::TempPath("w.trace")).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(l0), std::string::npos);
}

std::vector<uint8_t> Floats(const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::vector<uint32_t> Active(const std::string& trace, int layer) {
  auto reader = TraceReader::Open(trace);
  std::vector<uint32_t> ids;
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return ids;
  EXPECT_TRUE(ForEachToken(**reader, [&](const TokenActivations& t) {
                ids = t.layers[layer].experts[0].active;
              }).ok());
  return ids;
}

// Float activations are values, not masks: without a threshold every non-zero
// (e.g. SiLU's small negatives) would count as active, so a threshold is required.
TEST(NpyImport, FloatArraysNeedAThreshold) {
  TraceModelShape shape{"toy", 1, 4, 1, 1, false};
  std::string f = WriteNpy("f.npy", 1, 4, Floats({0.5f, -0.01f, 0.0f, -2.0f}), "<f4");
  absl::Status s = ImportNpyMasks({f}, shape, {}, testing::TempPath("f.trace")).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--threshold"), std::string::npos) << s;
  EXPECT_NE(s.message().find(f), std::string::npos) << s;
  const std::string out = testing::TempPath("ft.trace");
  ASSERT_TRUE(ImportNpyMasks({f}, shape, {}, out, {.threshold = 0.1}).ok());
  EXPECT_EQ(Active(out, 0), (std::vector<uint32_t>{0, 3}));
}

TEST(NpyImport, IntegerArraysAreMasks) {
  TraceModelShape shape{"toy", 1, 3, 1, 1, false};
  std::vector<uint8_t> v(12, 0);
  v[4] = 0;
  v[9] = 1;  // element 2, second byte
  std::string f = WriteNpy("i.npy", 1, 3, v, "<i4");
  const std::string out = testing::TempPath("i.trace");
  ASSERT_TRUE(ImportNpyMasks({f}, shape, {}, out).ok());
  EXPECT_EQ(Active(out, 0), (std::vector<uint32_t>{2}));
}

// A header claiming a huge row is refused before anything is allocated.
TEST(NpyImport, HugeColumnCountIsRefusedBeforeAllocating) {
  TraceModelShape shape{"toy", 1, 4, 1, 1, false};
  std::string f = WriteNpy("huge.npy", 1, int64_t{1} << 62, {1, 0, 1, 0});
  absl::Status s = ImportNpyMasks({f}, shape, {}, testing::TempPath("h.trace")).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("neurons per row"), std::string::npos) << s;
}

TEST(NpyImport, ExistingOutputIsKeptWithoutOverwrite) {
  TraceModelShape shape{"toy", 1, 3, 1, 1, false};
  std::string f = WriteNpy("k.npy", 1, 3, {1, 0, 1});
  const std::string out = testing::TempPath("k.trace");
  ASSERT_TRUE(ImportNpyMasks({f}, shape, {}, out).ok());
  absl::Status s =
      ImportNpyMasks({f}, shape, {}, out, {.writer = {.overwrite = false}}).status();
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
}

TEST(NpyImport, LayerCountMustMatch) {
  TraceModelShape shape{"toy", 2, 3, 1, 1, false};
  std::string l0 = WriteNpy("c.npy", 1, 3, {1, 0, 1});
  EXPECT_FALSE(ImportNpyMasks({l0}, shape, {}, testing::TempPath("c.trace")).ok());
}

}  // namespace
}  // namespace sparseflash
