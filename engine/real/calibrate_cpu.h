// What device calibration measures of this machine's processor and memory,
// and the small helpers the calibration shares: DRAM read and copy bandwidth,
// the real engine's task hand-off, the sparse FFN kernel's rate per core, and
// the CPU and memory the kernel reports.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/device_profile.h"
#include "engine/real/sparse_ffn_kernel.h"

namespace sparseflash::calibration {

inline double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The middle value (the upper one of an even count).
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The bundles the kernel is calibrated on: each weight format the catalog's
// models use (the profile's kernel_rates), 4096 wide and gated; INT4 g32 also
// gives the core's own gemv rates.
inline constexpr FfnKernelShape kKernelShape{
    .d_model = 4096, .group = 32, .bits = 4, .gated = true};
inline constexpr FfnKernelShape kFormatShapes[] = {
    {.d_model = 4096, .group = 16, .bits = 4, .gated = true},
    {.d_model = 4096, .group = 32, .bits = 4, .gated = true},
    {.d_model = 4096, .group = 64, .bits = 8, .gated = true},
};

// DRAM read bandwidth with `threads` threads summing a buffer of `bytes`, B/s.
double MeasureDramRead(int threads, int64_t bytes);
// memcpy bandwidth over `bytes`, B/s.
double MeasureCopy(int64_t bytes);
// Median time to hand an empty task to a worker of the engine's thread pool
// and get its completion back, ns.
double MeasureTaskDispatchNs(int threads, int tasks);
// The sparse FFN kernel over `shape` bundles from DRAM on each of `threads`
// cores at once, scattered or `in_order`, bytes/s per core.
double MeasureKernel(const FfnKernelShape& shape, double seconds_target, bool in_order, int threads,
                     int64_t arena_bytes_per_thread = int64_t{256} << 20);
// The kernel's rates for every kFormatShapes format, named as
// Quantization::Name(): per core with all `threads` computing at once and with
// one alone, each the median of three passes of `seconds` per pattern, the
// all-busy rates capped at the DRAM read rate `dram_cap`.
std::vector<KernelRateSpec> MeasureFormats(double seconds, int threads, double dram_cap,
                                           int64_t arena_bytes_per_thread = int64_t{256} << 20);
std::string CpuModel();
double CpuGhz();
// A /proc/meminfo field ("MemTotal"), bytes.
int64_t MemInfo(const std::string& key);

}  // namespace sparseflash::calibration
