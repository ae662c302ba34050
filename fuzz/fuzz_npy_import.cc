// libFuzzer harness: the .npy reader behind `trace import --npy` (header, dtype,
// shape, rows) on one layer, with and without a threshold.
#include <cstdlib>
#include <sstream>
#include <string>

#include "traces/npy_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (double threshold : {-1.0, 0.5}) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    (void)sparseflash::ForEachNpyRow(in, "fuzz.npy", 16, threshold,
                                     [](const std::vector<uint32_t>& ids) {
                                       for (uint32_t id : ids) {
                                         if (id >= 16) std::abort();
                                       }
                                     });
  }
  return 0;
}
