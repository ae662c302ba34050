// What device calibration measures of the storage, through the engine's own
// io_uring O_DIRECT device and through the page cache: read throughput by
// request size and depth, the cost of a batch beyond its reads, the gap
// between reads of a one-slot batch, and the kernel's read-ahead as a mapped
// file is faulted in; and the scratch or existing file measured.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "devices/device_profile.h"
#include "engine/read_ahead.h"

namespace sparseflash::calibration {

// Writes `bytes` of random data (not zeros: no file system may elide them).
absl::Status WriteScratch(const std::string& path, int64_t bytes);

// The whole MiBs of an existing file to measure, at least 256 of them.
absl::StatusOr<int64_t> ReadableFileBytes(const std::string& path);

// What one batch of reads achieved: its bytes per second, and the reads the
// device held on average while busy (at most the depth asked for; fewer where
// the submitter falls behind the completions).
struct ReadRate {
  double bytes_per_s = 0;
  double mean_in_flight = 0;
};

// One batch of reads of `size` at queue depth `depth` through the real device.
// With `*batch_reads` 0 the batch first grows until it lasts `seconds_target`
// and `*batch_reads` gets its size; otherwise that size is used.
absl::StatusOr<ReadRate> MeasureReads(const std::string& path, int64_t file_bytes, int64_t size,
                                      int depth, bool sequential, double seconds_target,
                                      std::string* notice, int* batch_reads);

// Median time of a batch of one 4 KiB read through the real device, each batch
// alone (the device idle, its submitter asleep), minus one read's device time at
// depth 1 (`read_4k_depth1_bytes_per_s`): what every batch costs beyond its reads.
absl::StatusOr<double> MeasureSubmitOverheadNs(const std::string& path, int64_t file_bytes,
                                               double read_4k_depth1_bytes_per_s, int batches);

// The turnaround inside a batch limited to one read in flight: the wall time of
// a long single-slot batch of 4 KiB reads minus what the block device reports it
// spent on them, per read. 0 with a notice where the device's counters are not
// readable (then the simulator charges no gap).
absl::StatusOr<double> MeasureResubmitGapNs(const std::string& path, int64_t file_bytes,
                                            double seconds, std::string* notice);

// The windows llamacpp reads from this device (mapped, llama.cpp's
// POSIX_FADV_SEQUENTIAL doubles the device's read-ahead) and the requests the
// kernel sends each as.
ReadAheadShape ReadAheadOf(const FlashSpec& flash);

// The kernel's read-ahead as llamacpp plans it (windows of twice the device's
// read-ahead, each sent as requests of at most the device's largest request,
// two windows in flight), measured through the page cache as a mapped file is
// read by `threads` threads taking its chunks in turn, as llama.cpp's compute
// threads share a matrix: the median of reads of `bytes` at seven places spread
// over the file.
absl::StatusOr<FlashPoint> MeasureReadAhead(const std::string& path, int64_t file_bytes,
                                            int64_t bytes, const FlashSpec& flash, int threads,
                                            const std::string& date);

// The same windows read directly (O_DIRECT, sequential requests of the
// read-ahead's size), one window's requests in flight and two: what llamacpp
// with mmap=false reads, a point of the direct reader at each depth.
absl::StatusOr<std::vector<FlashPoint>> MeasureDirectWindows(const std::string& path,
                                                             int64_t file_bytes,
                                                             const FlashSpec& flash, double seconds,
                                                             std::string* notice,
                                                             const std::string& date);

}  // namespace sparseflash::calibration
