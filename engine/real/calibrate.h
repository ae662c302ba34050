// Measures this machine with the engine's own real devices and kernels and
// returns a device profile: io_uring O_DIRECT read throughput by request size
// and queue depth on a scratch file (random over the whole file, and sequential),
// DRAM read and copy bandwidth, and the sparse FFN kernel's rate per core. The
// scratch file is removed afterwards, also on error.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "devices/device_profile.h"

namespace sparseflash {

struct CalibrateOptions {
  std::string scratch_dir;  // where a scratch file is written, measured and removed
  // Or an existing file to measure instead, only read (e.g. the weight file runs
  // will read: storage behind a cache, such as a virtual disk, is as fast as
  // that file's blocks are, not as a fresh file's); at least 256 MiB.
  std::string read_file;
  bool quick = false;  // fewer points, a smaller file, shorter runs (< 30 s)
  std::function<void(const std::string&)> progress;
};

absl::StatusOr<DeviceProfile> CalibrateHost(const CalibrateOptions& options);

// The kernel's read-ahead window, KiB, of the block device holding `path`
// (its queue/read_ahead_kb; a partition's disk's; else its backing device's);
// 0 where none is readable. What calibration writes as flash.read_ahead_kb.
int BlockDeviceReadAheadKb(const std::string& path);
// The largest request, KiB, the kernel sends the block device holding `path`
// (its queue/max_sectors_kb; a partition's disk's); 0 where not readable. What
// calibration writes as flash.max_request_kb.
int BlockDeviceMaxRequestKb(const std::string& path);

// A device's throughput does not fall when more reads are in flight, so for each
// request size a measured dip in queue depth is noise: replaces the points of
// each size (and reader: direct or page cache) by their least-squares non-decreasing fit over depth
// (pool adjacent violators), noting the measured value in the point's source.
void FitMonotoneInDepth(std::vector<FlashPoint>& points);

}  // namespace sparseflash
