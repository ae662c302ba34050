// Energy per unit of work: each unit's busy time at its power, DRAM bytes at
// the energy per byte, the base power over the elapsed time.
#include "sim/energy.h"

#include "gtest/gtest.h"

namespace sparseflash {
namespace {

DeviceProfile PoweredDevice() {
  DeviceProfile d;
  d.base_w = 1;
  d.cores = {{.name = "big", .count = 1, .active_w = 3}, {.name = "mid", .count = 2, .active_w = 1}};
  d.npu.active_w = 2;
  d.flash.active_w = 0.5;
  d.dram.energy_joules_per_byte = 1e-10;
  return d;
}

TEST(Energy, SumsEachUnitsBusyTimeAtItsPower) {
  const UnitActivity a{.cpu_busy = {Seconds(1), Seconds(2)},
                       .cpu_class = {"big", "mid"},
                       .npu_busy = Seconds(1),
                       .flash_busy = Seconds(2),
                       .dram_bytes = 10'000'000'000,
                       .elapsed = Seconds(4)};
  // base 4 + big 3 + mid 2 + NPU 2 + flash 1 + DRAM 1.
  EXPECT_DOUBLE_EQ(EnergyJoules(PoweredDevice(), a), 13);
}

TEST(Energy, IsZeroWhenTheProfileStatesNoPower) {
  DeviceProfile d = PoweredDevice();
  d.base_w = 0;
  EXPECT_EQ(EnergyJoules(d, {.cpu_busy = {Seconds(1)}, .cpu_class = {"big"}, .elapsed = Seconds(1)}),
            0);
}

TEST(Energy, ActivityBetweenTwoSnapshotsIsTheirDifference) {
  const UnitActivity early{.cpu_busy = {Seconds(1)}, .cpu_class = {"big"}, .npu_busy = Seconds(1)};
  const UnitActivity late{.cpu_busy = {Seconds(3)}, .cpu_class = {"big"}, .npu_busy = Seconds(4)};
  const UnitActivity d = ActivityBetween(early, late);
  EXPECT_EQ(d.cpu_busy.at(0), Seconds(2));
  EXPECT_EQ(d.npu_busy, Seconds(3));
  EXPECT_EQ(d.cpu_class.at(0), "big");
}

}  // namespace
}  // namespace sparseflash
