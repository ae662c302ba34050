// How fast this machine computes now against what its device profile says.
// A host's speed drifts (a VM's host is shared; a phone throttles), so a
// replay's prediction from a profile calibrated earlier mixes the model's error
// with that drift. MeasureComputeNow measures the rates calibration measured,
// the same way, and WithComputeNow prices the prediction at them: the gap left
// is the model's.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "devices/device_profile.h"

namespace sparseflash {

// Each rate now over the profile's (1 = as calibrated).
struct ComputeNow {
  double gemv = 1;              // the sparse FFN kernel over scattered bundles, all cores
  double dense_gemv = 1;        // the GEMV over consecutive rows, all cores
  double gemv_alone = 1;        // ... one core computing alone
  double dense_gemv_alone = 1;  // ... one core computing alone
  std::string summary;          // one line: the rates now and in the profile
};

// Measures the rates behind `profile`'s first core class as `device calibrate`
// measured them (its own format, INT4 g32, over `span_bytes` of scattered
// bundles, calibration's 512 MiB by default; the median of three passes of
// `seconds` per pattern) and divides by the profile's. The DRAM read rate is
// not measured again: the kernels are bound by memory, so their rates carry its
// drift, and two threads' read loop is the noisier reading (calibrate_cpu.h).
// An error naming the profile's field when it was not calibrated on this
// processor (its soc) or states no kernel rate.
// Whether MeasureComputeNow can compare `profile` here: the error it would give
// before measuring anything.
absl::Status CheckComputeComparable(const DeviceProfile& profile);
absl::StatusOr<ComputeNow> MeasureComputeNow(const DeviceProfile& profile, double seconds,
                                             int64_t span_bytes = int64_t{512} << 20);

// Two checks taken around a run (the host's speed moves within seconds): each
// ratio their geometric mean, the summary both checks' (AroundRunSummary).
ComputeNow AroundRun(const ComputeNow& before, const ComputeNow& after);

// The summaries of a check just before a run and one just after it, in one line.
std::string AroundRunSummary(const std::string& before, const std::string& after);

// `profile` with its compute rates multiplied by `now`'s ratios: every core
// class's kernel rates (each format's, wide spans too, by the INT4 g32 ratios)
// and its dense operations. Flash, DRAM, hand-offs and capacities are left as
// they are; the cores' sources say what was scaled.
DeviceProfile WithComputeNow(DeviceProfile profile, const ComputeNow& now);

}  // namespace sparseflash
