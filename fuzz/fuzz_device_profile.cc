// libFuzzer harness: device profile text (protobuf text format) through parsing,
// validation and the flash curve the simulator reads throughput from.
#include <cmath>
#include <cstdlib>
#include <string>

#include "devices/device_catalog.h"
#include "sim/flash_curve.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sparseflash::DeviceProfile> d = sparseflash::ParseDeviceProfile(text, "fuzz");
  if (!d.ok()) return 0;
  (void)sparseflash::DeviceProfileToText(*d);
  const sparseflash::FlashCurve curve(*d);
  for (int64_t bytes : {512, 4096, 8192, 1 << 20, 1 << 30}) {
    for (int depth : {1, 7, 64}) {
      for (bool sequential : {false, true}) {
        const double tp = curve.Throughput({.request_bytes = bytes,
                                            .queue_depth = depth,
                                            .sequential = sequential,
                                            .range_bytes = 1 << 27,
                                            .core_class = d->cores[0].name});
        if (!(tp > 0) || !std::isfinite(tp)) std::abort();  // the simulator divides by it
      }
    }
  }
  return 0;
}
