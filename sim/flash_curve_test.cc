#include "sim/flash_curve.h"

#include "devices/device_catalog.h"
#include "gtest/gtest.h"

namespace sparseflash {
namespace {

TEST(FlashCurve, M1MaxReproducesFigure2bPoints) {
  FlashCurve curve(*BuiltinDevices().Find("m1max"));
  // 32 threads, 8 KiB and 16 KiB: 1162 and 2103 "MB/s" read as MiB/s (Table 2's 1.25 / 2.25).
  EXPECT_NEAR(curve.Throughput({8192, 32, false, 0, ""}) / 1e9, 1.218, 0.001);
  EXPECT_NEAR(curve.Throughput({16384, 32, false, 0, ""}) / 1e9, 2.205, 0.001);
}

TEST(FlashCurve, InterpolatesLinearlyInSizeAndDepth) {
  FlashCurve curve(*BuiltinDevices().Find("m1max"));
  double mid_size = curve.Throughput({12288, 32, false, 0, ""});
  // The profile stores MB/s rounded to 0.1.
  EXPECT_NEAR(mid_size, (1162 + 2103) / 2.0 * 1.048576e6, 1e5);
  double mid_depth = curve.Throughput({4096, 24, false, 0, ""});
  EXPECT_NEAR(mid_depth, (495 + 597) / 2.0 * 1.048576e6, 1e5);
}

TEST(FlashCurve, BelowSmallestSizeKeepsIops) {
  FlashCurve curve(*BuiltinDevices().Find("m1max"));
  EXPECT_NEAR(curve.Throughput({2048, 32, false, 0, ""}),
              curve.Throughput({4096, 32, false, 0, ""}) / 2, 1);
}

TEST(FlashCurve, OnePlus12RangeAndCoreClass) {
  FlashCurve curve(*BuiltinDevices().Find("oneplus12"));
  EXPECT_NEAR(curve.Throughput({4096, 1, false, 128 << 20, "big"}) / 1e6, 1076.1, 0.1);
  EXPECT_NEAR(curve.Throughput({4096, 1, false, 128 << 20, "little"}) / 1e6, 761.87, 0.1);
  EXPECT_NEAR(curve.Throughput({4096, 1, false, 0, "big"}) / 1e6, 450, 0.1);  // GB-scale range
  EXPECT_NEAR(curve.Throughput({524288, 1, true, 0, "big"}) / 1e6, 4000, 0.1);
}

// A sequential read below the smallest sequential point is not priced as a
// latency-bound one: it is at least as fast as a random read of its size.
TEST(FlashCurve, SequentialIsNeverSlowerThanRandom) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  FlashCurve curve(d);
  for (int64_t size : {int64_t{16384}, int64_t{131072}, int64_t{262144}, int64_t{1} << 20}) {
    for (int depth : {1, 4, 32}) {
      EXPECT_GE(curve.Throughput({size, depth, true, 0, "big"}),
                curve.Throughput({size, depth, false, 0, "big"}))
          << size << " B at depth " << depth;
    }
  }
  // Where the sequential points say more, they count: 512 KiB at 4 GB/s.
  EXPECT_NEAR(curve.Throughput({524288, 1, true, 0, "big"}) / 1e6, 4000, 0.1);
  // Without the bound, 16 KiB sequential would be 1/32 of the 512 KiB point.
  EXPECT_GT(curve.Throughput({16384, 1, true, 0, "big"}), 4000e6 / 32);
}

// Reads through the page cache are priced from the points measured that way,
// direct reads from the others; a reader without points of its own takes all.
TEST(FlashCurve, EachReaderIsPricedFromItsOwnPoints) {
  DeviceProfile d = *BuiltinDevices().Find("oneplus12");
  const FlashRequestShape direct{.request_bytes = 4 << 20, .queue_depth = 8, .sequential = true};
  FlashRequestShape mapped = direct;
  mapped.page_cache = true;
  const double before = FlashCurve(d).Throughput(direct);
  EXPECT_EQ(FlashCurve(d).Throughput(mapped), before) << "no page-cache points: the same";
  d.flash.points.push_back({.request_bytes = 4 << 20,
                            .queue_depth = 8,
                            .sequential = true,
                            .throughput_bytes_per_s = before / 3,
                            .page_cache = true});
  const FlashCurve curve(d);
  EXPECT_EQ(curve.Throughput(direct), before) << "a page-cache point priced a direct read";
  EXPECT_NEAR(curve.Throughput(mapped), before / 3, 1);
  mapped.queue_depth = 4;  // below its one measured depth: proportionally less
  EXPECT_NEAR(curve.Throughput(mapped), before / 6, 1);
}

}  // namespace
}  // namespace sparseflash
