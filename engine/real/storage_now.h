// How fast this machine's storage reads now against what its device profile
// says. A virtual disk's host caches what was read and serves the same pattern
// at rates that move by half from one minute to the next, so a replay's
// prediction from a profile calibrated earlier mixes the model's error with
// that drift (as ComputeNow does for the cores). MeasureStorageNow reads one of
// the profile's points again, the same way calibration measured it, and
// WithStorageNow prices the prediction at the ratio: the gap left is the model's.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "devices/device_profile.h"

namespace sparseflash {

// Each rate now over the profile's (1 = as calibrated or not measured).
struct StorageNow {
  double direct = 1;    // random O_DIRECT reads, at the reference point (StorageReferencePoint)
  double mapped = 1;    // the kernel's read-ahead of a mapped file (page_cache points)
  std::string summary;  // one line: the rates now and in the profile
};

// The profile's O_DIRECT random-read point nearest a bundle read (8 KiB at depth
// 32, the distance the sum of the log2 ratios of size and depth); null when it
// states none.
const FlashPoint* StorageReferencePoint(const FlashSpec& flash);

// Whether MeasureStorageNow can compare `profile` (with `mapped`, its mapped
// read-ahead too): the error it would give before reading anything.
absl::Status CheckStorageComparable(const DeviceProfile& profile, bool mapped);

// Reads `path` (the run's weight file, at least 256 MiB) at the reference
// point, random, the median of three batches of about `seconds` (calibration's 0.15), and, with
// `mapped`, faults 256 MiB of it in through a mapping at seven places as
// calibration measures the read-ahead; divides by the profile's points. An error
// naming the field when the profile states no O_DIRECT random point (or, with
// `mapped`, no page_cache point).
absl::StatusOr<StorageNow> MeasureStorageNow(const DeviceProfile& profile, const std::string& path,
                                             double seconds, bool mapped);

// Two checks taken around a run: each ratio their geometric mean, the summary
// both checks'.
StorageNow StorageAroundRun(const StorageNow& before, const StorageNow& after);

// `profile` with every O_DIRECT flash point's throughput times `now.direct` and
// every page_cache point's times `now.mapped`; each scaled point's source says so.
DeviceProfile WithStorageNow(DeviceProfile profile, const StorageNow& now);

}  // namespace sparseflash
