#include "engine/real/storage_now.h"

#include <gtest/gtest.h>

#include "engine/real/compute_now.h"

namespace sparseflash {
namespace {

FlashPoint Point(int64_t bytes, int depth, double rate, bool sequential = false,
                 bool page_cache = false) {
  return {.request_bytes = bytes,
          .queue_depth = depth,
          .sequential = sequential,
          .throughput_bytes_per_s = rate,
          .source = "measured",
          .page_cache = page_cache};
}

TEST(StorageNow, TheReferenceIsTheRandomDirectPointNearestABundleRead) {
  FlashSpec flash;
  flash.points = {Point(4096, 32, 1),
                  Point(8192, 64, 2),
                  Point(8192, 32, 3, /*sequential=*/true),
                  Point(8192, 32, 4, false, /*page_cache=*/true),
                  Point(8192, 16, 5),
                  Point(65536, 32, 6)};
  const FlashPoint* p = StorageReferencePoint(flash);
  ASSERT_NE(p, nullptr);
  // 4 KiB at 32 and 8 KiB at 64 and 16 are one doubling away; the first of them wins.
  EXPECT_DOUBLE_EQ(p->throughput_bytes_per_s, 1);
  flash.points.push_back(Point(8192, 32, 7));
  EXPECT_DOUBLE_EQ(StorageReferencePoint(flash)->throughput_bytes_per_s, 7);
  EXPECT_EQ(StorageReferencePoint(FlashSpec{}), nullptr);
}

TEST(StorageNow, ScalesDirectAndMappedPointsByTheirOwnRatios) {
  DeviceProfile d;
  d.flash.points = {Point(8192, 32, 100), Point(1 << 20, 8, 200, true),
                    Point(4 << 20, 8, 300, true, /*page_cache=*/true)};
  d.dram.cpu_bytes_per_s = 1000;
  const DeviceProfile s = WithStorageNow(d, {.direct = 0.5, .mapped = 2, .summary = "x"});
  EXPECT_DOUBLE_EQ(s.flash.points[0].throughput_bytes_per_s, 50);
  EXPECT_DOUBLE_EQ(s.flash.points[1].throughput_bytes_per_s, 100);
  EXPECT_DOUBLE_EQ(s.flash.points[2].throughput_bytes_per_s, 600);
  EXPECT_NE(s.flash.points[0].source.find("storage now"), std::string::npos);
  EXPECT_DOUBLE_EQ(s.dram.cpu_bytes_per_s, 1000);
  // A ratio of 1 (not measured) leaves the point and its source as they were.
  const DeviceProfile same = WithStorageNow(d, {.direct = 1, .mapped = 1});
  EXPECT_EQ(same.flash.points[2].source, "measured");
}

TEST(StorageNow, AroundARunEachRatioIsTheGeometricMeanOfTheTwoChecks) {
  const StorageNow around = StorageAroundRun({.direct = 0.5, .mapped = 4, .summary = "first"},
                                             {.direct = 2, .mapped = 1, .summary = "second"});
  EXPECT_DOUBLE_EQ(around.direct, 1);
  EXPECT_DOUBLE_EQ(around.mapped, 2);
  EXPECT_EQ(around.summary, AroundRunSummary("first", "second"));
}

TEST(StorageNow, RefusesAProfileWithoutThePointsItWouldCompare) {
  DeviceProfile d;
  d.name = "bare";
  absl::StatusOr<StorageNow> none = MeasureStorageNow(d, "/nonexistent", 0.01, false);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("flash.points"), std::string::npos) << none.status();
  EXPECT_NE(none.status().message().find("bare"), std::string::npos) << none.status();
  d.flash.points = {Point(8192, 32, 100)};
  absl::StatusOr<StorageNow> unmapped = MeasureStorageNow(d, "/nonexistent", 0.01, true);
  ASSERT_FALSE(unmapped.ok());
  EXPECT_NE(unmapped.status().message().find("page_cache"), std::string::npos) << unmapped.status();
  // With the points, the file itself is checked before anything is read.
  absl::StatusOr<StorageNow> missing = MeasureStorageNow(d, "/nonexistent", 0.01, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent"), std::string::npos) << missing.status();
}

}  // namespace
}  // namespace sparseflash
