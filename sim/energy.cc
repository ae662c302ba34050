#include "sim/energy.h"

namespace sparseflash {

double EnergyJoules(const DeviceProfile& device, const UnitActivity& a) {
  if (!device.has_power()) return 0;
  double joules = device.base_w * a.elapsed.seconds();
  for (size_t i = 0; i < a.cpu_busy.size(); ++i) {
    const CoreClassSpec* core =
        i < a.cpu_class.size() ? device.FindCoreClass(a.cpu_class[i]) : nullptr;
    if (core != nullptr) joules += core->active_w * a.cpu_busy[i].seconds();
  }
  joules += device.npu.active_w * a.npu_busy.seconds();
  joules += device.flash.active_w * a.flash_busy.seconds();
  joules += device.dram.energy_joules_per_byte * static_cast<double>(a.dram_bytes);
  return joules;
}

UnitActivity ActivityBetween(const UnitActivity& earlier, const UnitActivity& later) {
  UnitActivity d = later;
  for (size_t i = 0; i < d.cpu_busy.size() && i < earlier.cpu_busy.size(); ++i) {
    d.cpu_busy[i] = later.cpu_busy[i] - earlier.cpu_busy[i];
  }
  d.npu_busy = later.npu_busy - earlier.npu_busy;
  d.flash_busy = later.flash_busy - earlier.flash_busy;
  d.dram_bytes = later.dram_bytes - earlier.dram_bytes;
  d.elapsed = later.elapsed - earlier.elapsed;
  return d;
}

}  // namespace sparseflash
