// Flash read throughput from a device profile's measured points, never from one
// constant: linear in request size between measured sizes (same IOPS below the
// smallest), linear in queue depth between measured depths, the points of the
// nearest measured address range, and the issuing core class's factor; a
// sequential read at least as fast as a random one of its size. A read through
// the page cache is priced from the points measured that way, a direct read
// from the others (either from all points where its reader has none).
// Immutable; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "devices/device_profile.h"

namespace sparseflash {

struct FlashRequestShape {
  int64_t request_bytes = 4096;
  int queue_depth = 1;  // reads in flight
  bool sequential = false;
  int64_t range_bytes = 0;  // address range of random reads; 0 = large
  std::string core_class;   // issuing core class; "" = the profile's first class
  bool page_cache = false;  // the kernel's read-ahead reads it (a mapped file)
};

class FlashCurve {
 public:
  explicit FlashCurve(const DeviceProfile& profile);

  // Aggregate device throughput, bytes/s, for reads of this shape.
  double Throughput(const FlashRequestShape& shape) const;

 private:
  // From the points of the shape's kind (sequential or random) alone.
  double MeasuredThroughput(const FlashRequestShape& shape) const;
  double SizeCurve(const std::vector<FlashPoint>& points, int64_t bytes) const;
  std::vector<FlashPoint> Select(const FlashRequestShape& shape) const;

  std::vector<FlashPoint> points_;
  std::vector<CoreClassSpec> cores_;
};

}  // namespace sparseflash
