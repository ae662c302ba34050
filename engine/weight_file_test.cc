#include "engine/weight_file.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "traces/model_catalog.h"

namespace sparseflash {
namespace {

TEST(WeightFile, WritesTheModelsShapeAndChecksIt) {
  ModelSpec model = *LoadModel("tinystories-relu-260k");
  const std::string path = ::testing::TempDir() + "/tiny.sfw";
  int64_t last = 0;
  ASSERT_TRUE(WriteWeightFile(model, LayoutKind::kBundle, path, true, [&](int64_t done, int64_t) {
                last = done;
              }).ok());
  const WeightFileInfo plan = PlanWeightFile(model, LayoutKind::kBundle);
  EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(path)), plan.file_bytes);
  EXPECT_EQ(last, plan.file_bytes);
  absl::StatusOr<WeightFileInfo> info = ReadWeightFileHeader(path, model);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->neurons, 4 * 192);
  EXPECT_EQ(info->NeuronOffset(1) - info->NeuronOffset(0), 4096);

  EXPECT_FALSE(WriteWeightFile(model, LayoutKind::kBundle, path, false, nullptr).ok());
  absl::StatusOr<WeightFileInfo> other = ReadWeightFileHeader(path, *LoadModel("opt-6.7b"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("header.model"), std::string::npos);
  std::filesystem::resize_file(path, plan.file_bytes - 4096);
  absl::StatusOr<WeightFileInfo> cut = ReadWeightFileHeader(path, model);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos);
}

// A file made at another quantization than the catalog's default says so in its
// header: the model takes the file's quantization, and a --quant that disagrees
// or another model is an error naming both.
TEST(WeightFile, TheFileGivesTheQuantization) {
  ModelSpec made = *LoadModel("tinystories-relu-260k");
  ASSERT_TRUE(ParseQuantization("int4-g32", &made.quantization).ok());
  const std::string path = ::testing::TempDir() + "/tiny-int4.sfw";
  ASSERT_TRUE(WriteWeightFile(made, LayoutKind::kBundle, path, true, nullptr).ok());

  ModelSpec model = *LoadModel("tinystories-relu-260k");
  ASSERT_NE(model.quantization.Name(), "int4-g32");
  ASSERT_TRUE(MatchModelToWeightFile(path, "", &model).ok());
  EXPECT_EQ(model.quantization.Name(), "int4-g32");
  EXPECT_TRUE(ReadWeightFileHeader(path, model).ok());

  ModelSpec flagged = *LoadModel("tinystories-relu-260k");
  const absl::Status wrong = MatchModelToWeightFile(path, "int8-g64", &flagged);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("int4-g32"), std::string::npos) << wrong;
  EXPECT_NE(wrong.message().find("int8-g64"), std::string::npos) << wrong;
  EXPECT_NE(wrong.message().find("--quant"), std::string::npos) << wrong;

  ModelSpec other = *LoadModel("opt-6.7b");
  const absl::Status mismatch = MatchModelToWeightFile(path, "", &other);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.message().find("header.model"), std::string::npos) << mismatch;
}

}  // namespace
}  // namespace sparseflash
