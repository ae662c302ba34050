// Plain C++ view of a device profile (devices/device.proto): flash curve points,
// CPU core classes, DRAM ceilings and the NPU. Converted once from the protobuf at
// the edge and validated; value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sparseflash {

// Linux's default read-ahead window (VM_READAHEAD_PAGES), KiB.
inline constexpr int kDefaultReadAheadKb = 128;
// Linux's default largest request (BLK_DEF_MAX_SECTORS: 2560 sectors), KiB.
inline constexpr int kDefaultMaxRequestKb = 1280;

struct FlashPoint {
  int64_t request_bytes = 0;
  int queue_depth = 0;  // 0 = not stated
  bool sequential = false;
  int64_t range_bytes = 0;  // 0 = large (GB-scale)
  std::string core_class;   // "" = not stated
  double throughput_bytes_per_s = 0;
  std::string source;
  bool page_cache = false;  // read through the kernel's page cache (device.proto)
};

struct FlashSpec {
  std::string interface;
  std::vector<FlashPoint> points;
  int command_queue_depth = 32;
  int command_queues = 1;
  double multi_issuer_penalty = 0;
  double active_w = 0;            // storage power while reads are in flight (W)
  double submit_overhead_ns = 0;  // per batch of reads, beyond the throughput points
  double resubmit_gap_ns = 0;     // per read after the first k of a batch limited to k in flight
  int read_ahead_kb = kDefaultReadAheadKb;    // the kernel's read-ahead window (device.proto)
  int max_request_kb = kDefaultMaxRequestKb;  // the kernel's largest request (device.proto)
  std::string source;
};

// How the scattered-row rates fall with the memory the rows lie in
// (device.proto KernelRate.span_mib and after): the stated rates hold at
// span_bytes, the wide ones at wide_span_bytes. Not stated when wide_span_bytes is 0.
struct ScatterSpanRates {
  int64_t span_bytes = 0;
  int64_t wide_span_bytes = 0;
  double wide_gemv_bytes_per_s = 0;
  double wide_gemv_alone_bytes_per_s = 0;  // 0 = wide_gemv_bytes_per_s

  bool stated() const { return wide_span_bytes > 0; }
  // `rate` (measured at span_bytes) moved toward `wide` (at wide_span_bytes)
  // linearly in log(bytes), held at the ends.
  double At(int64_t bytes, double rate, double wide) const;
};

// A core's kernel rates for one weight format (device.proto KernelRate).
struct KernelRateSpec {
  std::string format;  // Quantization::Name(), e.g. "int4-g16"
  double gemv_bytes_per_s = 0;
  double dense_gemv_bytes_per_s = 0;        // 0 = gemv_bytes_per_s
  double gemv_alone_bytes_per_s = 0;        // one core busy; 0 = gemv_bytes_per_s
  double dense_gemv_alone_bytes_per_s = 0;  // 0 = dense_gemv_bytes_per_s
  ScatterSpanRates span;
  double call_ns = 0;  // fixed cost per sparse kernel call; 0 = not stated
};

struct CoreClassSpec {
  std::string name;
  int count = 0;
  double ghz = 0;
  double io_issue_factor = 1;
  double gemv_bytes_per_s = 0;
  std::string source;
  double dense_ops_per_s = 0;                // dense (prefill) operations per second, one core
  double task_dispatch_ns = 0;               // hand-off to a worker and back, per compute task
  double active_w = 0;                       // power of one busy core (W); 0 = not stated
  double dense_gemv_bytes_per_s = 0;         // over weights in matrix order; 0 = not stated
  std::vector<KernelRateSpec> kernel_rates;  // per weight format, where measured
  double gemv_alone_bytes_per_s = 0;         // this core computing alone; 0 = not stated
  double dense_gemv_alone_bytes_per_s = 0;   // 0 = not stated
  ScatterSpanRates span;                     // from the format's kernel_rates entry
  double kernel_call_ns = 0;                 // per sparse FFN task, the format's call_ns
  // A hand-off to or from a thread that waited longer than idle_window_ns costs
  // idle_wake_ns more (its core went idle); 0 = not stated.
  double idle_wake_ns = 0;
  double idle_window_ns = 0;
  // A task a worker takes from its queue as it finishes the one before (no
  // thread sleeps or wakes) costs this beyond its work instead of
  // task_dispatch_ns; not stated: task_dispatch_ns.
  std::optional<double> queued_task_ns;
  double QueuedTaskNs() const { return queued_task_ns.value_or(task_dispatch_ns); }

  // The rate over weights in matrix order: dense_gemv_bytes_per_s where stated,
  // else the sparse rate.
  double InOrderGemvRate() const {
    return dense_gemv_bytes_per_s > 0 ? dense_gemv_bytes_per_s : gemv_bytes_per_s;
  }
  // One core's rate (in matrix order or over scattered rows) when `busy` of the
  // profile's `cores` cores compute: the alone rate at one, the stated rate at
  // all, linear between; without an alone rate, the stated rate.
  double GemvRate(bool in_order, int busy, int cores) const {
    const double all = in_order ? InOrderGemvRate() : gemv_bytes_per_s;
    const double alone_stated = in_order ? dense_gemv_alone_bytes_per_s : gemv_alone_bytes_per_s;
    const double alone = alone_stated > 0 ? alone_stated : all;
    if (cores <= 1) return alone;
    if (busy >= cores) return all;
    return alone + (all - alone) * (std::max(busy, 1) - 1) / (cores - 1);
  }
};

struct DramSpec {
  int64_t capacity_bytes = 0;
  int64_t app_available_bytes = 0;
  double cpu_bytes_per_s = 0;
  double npu_bytes_per_s = 0;
  double combined_bytes_per_s = 0;
  double rewrite_bytes_per_s = 0;
  std::string source;
  std::string page_cache = "lru";  // "lru" or "mglru" (see device.proto)
  double energy_joules_per_byte = 0;
};

struct NpuSpec {
  bool present = false;
  double dense_ops_per_s = 0;
  double launch_overhead_ns = 0;
  std::string source;
  double active_w = 0;  // power while computing (W)
};

struct DeviceProfile {
  std::string name;
  std::string description;
  std::string soc;
  FlashSpec flash;
  std::vector<CoreClassSpec> cores;
  DramSpec dram;
  NpuSpec npu;
  std::string measured_on;
  std::string sources;
  double base_w = 0;  // SoC power beyond the busy units while the app runs (W)

  int total_cores() const;
  // Whether the profile states power figures (energy per token is then modelled).
  bool has_power() const { return base_w > 0; }
  const CoreClassSpec* FindCoreClass(const std::string& name) const;
  // This profile with each core's gemv rates taken from its kernel_rates entry
  // for `format` (a Quantization::Name()), where it has one; the profile a
  // model in that format runs on.
  DeviceProfile ForWeightFormat(const std::string& format) const;
  // This profile with each core's scattered-row rates (gemv_bytes_per_s and
  // its alone rate) at a span of `bytes`, where its ScatterSpanRates are stated.
  DeviceProfile ForScatterSpan(int64_t bytes) const;
  // The NPU's DRAM ceiling over the CPU's (1 without an NPU or either figure).
  double NpuCpuRateRatio() const {
    return npu.present && dram.cpu_bytes_per_s > 0 && dram.npu_bytes_per_s > 0
               ? dram.npu_bytes_per_s / dram.cpu_bytes_per_s
               : 1;
  }
  // Checks every field a simulation relies on; errors name `origin` and the field.
  absl::Status Validate(const std::string& origin) const;
};

}  // namespace sparseflash
