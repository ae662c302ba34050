// Energy of a run from the busy time of each unit: every CPU worker's busy time
// at its core class's active power, the NPU's at its power, the flash device's
// busy time at the storage's active power, the DRAM bytes the compute streamed
// at the DRAM energy per byte, and the SoC's base power over the elapsed time.
// All powers come from the device profile (0 when it states none).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "devices/device_profile.h"

namespace sparseflash {

struct UnitActivity {
  std::vector<Nanos> cpu_busy;         // per CPU worker
  std::vector<std::string> cpu_class;  // each CPU worker's core class
  Nanos npu_busy;
  Nanos flash_busy;
  int64_t dram_bytes = 0;
  Nanos elapsed;
};

// Joules; 0 when the profile states no power figures (DeviceProfile::has_power).
double EnergyJoules(const DeviceProfile& device, const UnitActivity& activity);

// `later` minus `earlier`, unit by unit (the same workers in both).
UnitActivity ActivityBetween(const UnitActivity& earlier, const UnitActivity& later);

}  // namespace sparseflash
