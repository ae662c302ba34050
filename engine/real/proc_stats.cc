#include "engine/real/proc_stats.h"

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

}  // namespace sparseflash
