// What device calibration measures of this machine's processor and memory,
// and the small helpers the calibration shares: DRAM read and copy bandwidth,
// the real engine's task hand-off, the sparse FFN kernel's rate per core, and
// the CPU and memory the kernel reports.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/device_profile.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/real/weight_memory.h"

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

// DRAM read bandwidth, B/s, summing a buffer of `bytes` (the engine's weight
// memory) with one thread and with `threads` threads at once: each the median
// of `passes` passes, the two interleaved. Run it while nothing else works:
// measured once per thread count right after `calibrate`'s flash passes (the
// kernel still finishing the read-ahead of a mapped file), two threads read
// 18.3 GB/s where the same loop alone in a process read 25-28 on an AMD EPYC
// VM, and a run's attention 29. The highest pass instead of the median read
// 44.8 GB/s once, where a standalone AVX-512 read got 28-31.
struct DramReadRates {
  double one = 0;  // one thread
  double all = 0;  // `threads` at once, together
};
DramReadRates MeasureDramRead(int threads, int64_t bytes, int passes);
// memcpy bandwidth over `bytes`, B/s.
double MeasureCopy(int64_t bytes);
// Handing a compute task to a worker of the engine's thread pool and getting
// its completion back, beyond the work, ns: `dispatch_ns` while the waiting
// threads are awake, and `idle_wake_ns` more once a thread has waited longer
// than `idle_window_ns` (its core went idle: a guest's halted vCPU, a phone
// core's deeper sleep state, from which it wakes slower). Measured one task at
// a time with tasks of 25 us to 1 ms of busy work, `tasks` per length (median);
// idle_wake_ns and idle_window_ns 0 where the cost does not step up.
// `queued_ns`: what a task costs beyond its work when the worker takes it from
// the queue right after its last one (no thread sleeps or wakes): bursts of 16
// and 32 tasks of 50 us handed over at once, the extra time per extra task.
struct HandOff {
  double dispatch_ns = 0;
  double idle_wake_ns = 0;
  double idle_window_ns = 0;
  double queued_ns = 0;
};
HandOff MeasureHandOff(int tasks);
// Unit bundles of a shape (FillUnitBundles) filling about `span_bytes` (at
// least 2048 bundles): the memory a measurement scatters its bundles over, the
// engine's weight memory (AllocateWeightMemory), so that it is paged as the
// run's weights are.
class KernelArena {
 public:
  KernelArena(const FfnKernelShape& shape, int64_t span_bytes);
  const uint8_t* data() const { return bytes_.get(); }
  // Of its memory, the bytes the kernel put on huge pages; -1 = unknown.
  int64_t huge_bytes() const { return huge_bytes_; }
  const int64_t bundles;

 private:
  WeightMemory bytes_;
  int64_t huge_bytes_ = -1;
};

// The sparse FFN kernel's fixed cost per call, ns, as the engine pays it: the
// intercept of calls of 32 and of 512 bundles drawn at random from `arena`,
// each size's median over `batches` batches of 16 calls, the sizes alternated,
// and at least the intercept of calls of 1 and 17 bundles held in the caches
// (quantizing x, folding the output). From DRAM, a call's first bundles wait
// for memory before its loads run ahead, which cached calls do not show.
double MeasureKernelCallNs(const FfnKernelShape& shape, const KernelArena& arena, int batches);
// The sparse FFN kernel over bundles of `arena` (of `shape`) from DRAM on each
// of `threads` cores at once, scattered or `in_order`, bytes/s per core.
double MeasureKernel(const FfnKernelShape& shape, const KernelArena& arena, double seconds_target,
                     bool in_order, int threads);
// The kernel's rates for every kFormatShapes format, named as
// Quantization::Name(): per core with all `threads` computing at once and with
// one alone, each the median of three passes of `seconds` per pattern over an
// arena of `span_bytes`, the all-busy rates capped at the DRAM read rate
// `dram_cap`. With `wide_span_bytes` above `span_bytes`, the scattered rates
// also over that much memory (KernelRateSpec::span); 0 = not measured. Each
// format's fixed cost per call too (MeasureKernelCallNs). With `spreads`, one
// line per format of the lowest and highest pass of each rate (GB/s per core):
// how far the machine's own noise moved them.
std::vector<KernelRateSpec> MeasureFormats(double seconds, int threads, double dram_cap,
                                           int64_t span_bytes = int64_t{512} << 20,
                                           int64_t wide_span_bytes = 0,
                                           std::vector<std::string>* spreads = nullptr);
std::string CpuModel();
double CpuGhz();
// A /proc/meminfo field ("MemTotal"), bytes; 0 if absent (ProcFieldBytes).
int64_t MemInfo(const std::string& key);

}  // namespace sparseflash::calibration
