#include "engine/real/compute_now.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "devices/device_catalog.h"
#include "engine/real/calibrate_cpu.h"

namespace sparseflash {
namespace {

TEST(ComputeNow, ScalesEveryComputeRateAndLeavesTheRestAlone) {
  DeviceProfile d;
  d.name = "host";
  CoreClassSpec core;
  core.gemv_bytes_per_s = 10;
  core.dense_gemv_bytes_per_s = 20;
  core.gemv_alone_bytes_per_s = 12;
  core.dense_gemv_alone_bytes_per_s = 24;
  core.dense_ops_per_s = 40;
  core.task_dispatch_ns = 7;
  core.span = {.span_bytes = 1,
               .wide_span_bytes = 2,
               .wide_gemv_bytes_per_s = 8,
               .wide_gemv_alone_bytes_per_s = 9};
  core.kernel_rates.push_back({"int4-g16", 30, 60, 33, 66, core.span, 5});
  d.cores.push_back(core);
  d.dram.cpu_bytes_per_s = 100;
  d.dram.combined_bytes_per_s = 110;
  d.dram.capacity_bytes = 1000;
  d.flash.points.push_back({.request_bytes = 4096, .queue_depth = 1, .throughput_bytes_per_s = 50});
  const ComputeNow now{
      .gemv = 0.5, .dense_gemv = 0.25, .gemv_alone = 2, .dense_gemv_alone = 4, .summary = "x"};

  const DeviceProfile s = WithComputeNow(d, now);
  const CoreClassSpec& c = s.cores[0];
  EXPECT_DOUBLE_EQ(c.gemv_bytes_per_s, 5);
  EXPECT_DOUBLE_EQ(c.dense_gemv_bytes_per_s, 5);
  EXPECT_DOUBLE_EQ(c.gemv_alone_bytes_per_s, 24);
  EXPECT_DOUBLE_EQ(c.dense_gemv_alone_bytes_per_s, 96);
  EXPECT_DOUBLE_EQ(c.dense_ops_per_s, 20);
  EXPECT_DOUBLE_EQ(c.span.wide_gemv_bytes_per_s, 4);
  EXPECT_DOUBLE_EQ(c.span.wide_gemv_alone_bytes_per_s, 18);
  const KernelRateSpec& k = c.kernel_rates[0];
  EXPECT_DOUBLE_EQ(k.gemv_bytes_per_s, 15);
  EXPECT_DOUBLE_EQ(k.dense_gemv_bytes_per_s, 15);
  EXPECT_DOUBLE_EQ(k.gemv_alone_bytes_per_s, 66);
  EXPECT_DOUBLE_EQ(k.dense_gemv_alone_bytes_per_s, 264);
  EXPECT_DOUBLE_EQ(k.span.wide_gemv_bytes_per_s, 4);
  EXPECT_DOUBLE_EQ(k.call_ns, 5);  // a call's fixed cost is not a rate
  EXPECT_DOUBLE_EQ(c.task_dispatch_ns, 7);
  EXPECT_DOUBLE_EQ(s.dram.cpu_bytes_per_s, 100);  // a ceiling, not measured again
  EXPECT_DOUBLE_EQ(s.dram.combined_bytes_per_s, 110);
  EXPECT_EQ(s.dram.capacity_bytes, 1000);
  EXPECT_DOUBLE_EQ(s.flash.points[0].throughput_bytes_per_s, 50);
  EXPECT_NE(c.source.find("scaled"), std::string::npos);
}

TEST(ComputeNow, AroundARunEachRatioIsTheGeometricMeanOfTheTwoChecks) {
  const ComputeNow before{
      .gemv = 0.5, .dense_gemv = 2, .gemv_alone = 1, .dense_gemv_alone = 4, .summary = "first"};
  const ComputeNow after{
      .gemv = 2, .dense_gemv = 8, .gemv_alone = 1, .dense_gemv_alone = 0.25, .summary = "second"};
  const ComputeNow around = AroundRun(before, after);
  EXPECT_DOUBLE_EQ(around.gemv, 1);
  EXPECT_DOUBLE_EQ(around.dense_gemv, 4);
  EXPECT_DOUBLE_EQ(around.gemv_alone, 1);
  EXPECT_DOUBLE_EQ(around.dense_gemv_alone, 1);
  const size_t first = around.summary.find("first"), second = around.summary.find("second");
  ASSERT_NE(second, std::string::npos) << around.summary;
  EXPECT_LT(first, second) << around.summary;
}

TEST(ComputeNow, RefusesAProfileOfAnotherProcessor) {
  absl::StatusOr<DeviceProfile> phone = LoadDevice("oneplus12");
  ASSERT_TRUE(phone.ok()) << phone.status();
  absl::StatusOr<ComputeNow> now = MeasureComputeNow(*phone, 0.01);
  ASSERT_FALSE(now.ok());
  EXPECT_NE(now.status().message().find("soc"), std::string::npos) << now.status();
  EXPECT_NE(now.status().message().find(phone->soc), std::string::npos) << now.status();
}

TEST(ComputeNow, MeasuresEachRateAgainstTheProfiles) {
  // A profile of this processor stating 1 byte/s everywhere: each ratio is then
  // the rate measured now, in bytes/s.
  DeviceProfile d;
  d.name = "host";
  d.soc = calibration::CpuModel();
  CoreClassSpec core;
  core.gemv_bytes_per_s = core.dense_gemv_bytes_per_s = 1;
  core.gemv_alone_bytes_per_s = core.dense_gemv_alone_bytes_per_s = 1;
  d.cores.push_back(core);
  absl::StatusOr<ComputeNow> now = MeasureComputeNow(d, 0.02, int64_t{64} << 20);
  ASSERT_TRUE(now.ok()) << now.status();
  // Even emulated, a kernel streams more than 1 MB/s; a core alone no slower.
  EXPECT_GT(now->gemv, 1e6);
  EXPECT_GT(now->dense_gemv, 1e6);
  EXPECT_GE(now->gemv_alone, now->gemv);
  EXPECT_GE(now->dense_gemv_alone, now->dense_gemv);
  EXPECT_NE(now->summary.find("sparse FFN kernel"), std::string::npos);
}

}  // namespace
}  // namespace sparseflash

namespace sparseflash {
namespace {

// The kernel measured in rounds that end together: more threads than cores
// and rounds of a few milliseconds, over and over, so that a thread is often
// descheduled between one round's end and its look at whether it was the last.
// Every thread must run the same rounds; a thread that leaves a round early
// leaves the others waiting for ever (ctest's timeout fails the test).
TEST(MeasureKernel, ThreadsRunTheSameRoundsAndAllReturn) {
  const calibration::KernelArena arena(calibration::kKernelShape, 64 << 20);
  const int threads = 3;
  // Under an emulator each call takes a hundred times longer: fewer measurements.
  const int measurements = std::getenv("SF_TEST_EMULATOR") != nullptr ? 20 : 200;
  for (int i = 0; i < measurements; ++i) {
    const double rate =
        calibration::MeasureKernel(calibration::kKernelShape, arena, 0.001, i % 2 == 1, threads);
    ASSERT_GT(rate, 0) << "measurement " << i;
    ASSERT_TRUE(std::isfinite(rate)) << "measurement " << i;
  }
}

}  // namespace
}  // namespace sparseflash
