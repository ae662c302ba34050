#include "engine/real/proc_stats.h"

#include <unistd.h>

#include <fstream>

namespace sparseflash {

int64_t ProcFieldBytes(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  std::string key;
  while (in >> key) {
    if (key == field + ":") {
      int64_t kb;
      in >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

int64_t ProcessStatusBytes(const std::string& field) {
  return ProcFieldBytes("/proc/self/status", field);
}

int64_t PeakRssBytes() { return ProcessStatusBytes("VmHWM"); }

int64_t HugePageBytes() { return ProcFieldBytes("/proc/self/smaps_rollup", "AnonHugePages"); }

double StealSeconds(const std::string& path) {
  std::ifstream in(path);
  std::string cpu;
  // cpu user nice system idle iowait irq softirq steal ..., in clock ticks.
  int64_t ticks[8];
  if (!(in >> cpu) || cpu != "cpu") return -1;
  for (int64_t& t : ticks) {
    if (!(in >> t)) return -1;
  }
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<double>(ticks[7]) / hz : -1;
}

}  // namespace sparseflash
