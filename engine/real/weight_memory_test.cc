#include "engine/real/weight_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "engine/real/calibrate_cpu.h"

namespace sparseflash {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(WeightMemory, IsWholeHugePagesAlignedToThem) {
  EXPECT_EQ(WeightMemoryBytes(0), 2 * kMiB);
  EXPECT_EQ(WeightMemoryBytes(1), 2 * kMiB);
  EXPECT_EQ(WeightMemoryBytes(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(WeightMemoryBytes(2 * kMiB + 1), 4 * kMiB);
  const int64_t asked = 3 * kMiB + 5;
  WeightMemory m = AllocateWeightMemory(asked);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.get()) % (2 * kMiB), 0u);
  // Every byte up to the rounded size is the caller's (a sanitizer build checks).
  std::memset(m.get(), 7, static_cast<size_t>(WeightMemoryBytes(asked)));
  EXPECT_EQ(m.get()[WeightMemoryBytes(asked) - 1], 7);
}

TEST(DramRead, GivesBothRatesFromInterleavedPasses) {
  const calibration::DramReadRates r = calibration::MeasureDramRead(2, 8 * kMiB, 2);
  EXPECT_GT(r.one, 0);
  EXPECT_GT(r.all, 0);
  EXPECT_LT(r.one, 1e13);  // under 10 TB/s: a rate, not a division by ~0
}

}  // namespace
}  // namespace sparseflash
