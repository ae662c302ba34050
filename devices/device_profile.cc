#include "devices/device_profile.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sparseflash {
namespace {

absl::Status Bad(const std::string& origin, const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": field '", field, "': ", what));
}

}  // namespace

int DeviceProfile::total_cores() const {
  int n = 0;
  for (const CoreClassSpec& c : cores) n += c.count;
  return n;
}

const CoreClassSpec* DeviceProfile::FindCoreClass(const std::string& class_name) const {
  for (const CoreClassSpec& c : cores) {
    if (c.name == class_name) return &c;
  }
  return nullptr;
}

DeviceProfile DeviceProfile::ForWeightFormat(const std::string& format) const {
  DeviceProfile out = *this;
  for (CoreClassSpec& c : out.cores) {
    for (const KernelRateSpec& k : c.kernel_rates) {
      if (k.format != format) continue;
      c.gemv_bytes_per_s = k.gemv_bytes_per_s;
      c.dense_gemv_bytes_per_s = k.dense_gemv_bytes_per_s;
      c.gemv_alone_bytes_per_s = k.gemv_alone_bytes_per_s;
      c.dense_gemv_alone_bytes_per_s = k.dense_gemv_alone_bytes_per_s;
      c.span = k.span;
      c.kernel_call_ns = k.call_ns;
    }
  }
  return out;
}

double ScatterSpanRates::At(int64_t bytes, double rate, double wide) const {
  if (!stated() || span_bytes <= 0 || wide_span_bytes <= span_bytes || wide <= 0) return rate;
  const double t = std::log(static_cast<double>(bytes) / span_bytes) /
                   std::log(static_cast<double>(wide_span_bytes) / span_bytes);
  return rate + (wide - rate) * std::clamp(t, 0.0, 1.0);
}

DeviceProfile DeviceProfile::ForScatterSpan(int64_t bytes) const {
  DeviceProfile out = *this;
  for (CoreClassSpec& c : out.cores) {
    if (!c.span.stated() || bytes <= 0) continue;
    const double wide_alone = c.span.wide_gemv_alone_bytes_per_s > 0
                                  ? c.span.wide_gemv_alone_bytes_per_s
                                  : c.span.wide_gemv_bytes_per_s;
    if (c.gemv_alone_bytes_per_s > 0) {
      c.gemv_alone_bytes_per_s = c.span.At(bytes, c.gemv_alone_bytes_per_s, wide_alone);
    }
    c.gemv_bytes_per_s = c.span.At(bytes, c.gemv_bytes_per_s, c.span.wide_gemv_bytes_per_s);
  }
  return out;
}

// A number (NaN fails) in [lo, hi].
static bool In(double v, double lo, double hi) { return v >= lo && v <= hi; }

// A field's physical range in the unit the profile states it in: `scale` base
// units (bytes/s, operations/s, ns, bytes) per stated unit.
struct Range {
  double lo, hi;  // in base units
  double scale;
  const char* unit;
};
// Far outside any real part, but inside what a simulation of one can finish
// (a rate of 1 byte/s overflows simulated time): no phone's flash reads under
// 10 kB/s, no core or memory streams under 1 MB/s. The upper ends are wide
// (100 TB/s): tests make a unit all but free to isolate another.
constexpr Range kFlashRate{1e4, 1e14, 1e6, "MB/s"};
constexpr Range kGemvRate{1e6, 1e14, 1e9, "GB/s"};
constexpr Range kDramRate{1e7, 1e14, 1e9, "GB/s"};
constexpr Range kCoreOps{1e6, 1e17, 1e9, "GOPS"};
constexpr Range kNpuOps{1e9, 1e19, 1e12, "TOPS"};
constexpr Range kOverhead{0, 1e9, 1e3, "us"};
constexpr Range kPower{0, 1000, 1, "W"};
constexpr Range kMemory{double(int64_t{1} << 20), double(int64_t{1} << 50), 1, "bytes"};

// `v` within `r`, or 0 when `zero_ok` (not stated).
static absl::Status CheckRange(const std::string& origin, const std::string& field, double v,
                               const Range& r, bool zero_ok = false) {
  if (In(v, r.lo, r.hi) || (zero_ok && v == 0)) return absl::OkStatus();
  return Bad(origin, field,
             absl::StrCat(v / r.scale, " ", r.unit, " is outside [", r.lo / r.scale, ", ",
                          r.hi / r.scale, "] ", r.unit, zero_ok ? " (or 0: not stated)" : ""));
}

// A core's (or one of its formats') kernel rates, named under `field`.
static absl::Status CheckKernelRates(const std::string& origin, const std::string& field,
                                     double gemv, double dense, double alone, double dense_alone) {
  for (auto [name, v, zero_ok] : {std::tuple{".gemv_gb_s", gemv, false},
                                  std::tuple{".dense_gemv_gb_s", dense, true},
                                  std::tuple{".gemv_alone_gb_s", alone, true},
                                  std::tuple{".dense_gemv_alone_gb_s", dense_alone, true}}) {
    if (absl::Status s = CheckRange(origin, field + name, v, kGemvRate, zero_ok); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// A format's wide-span rates, when stated: a wider span than the narrow one,
// and a rate for it.
static absl::Status CheckScatterSpan(const std::string& origin, const std::string& field,
                                     const ScatterSpanRates& s) {
  if (s.span_bytes < 0 || s.wide_span_bytes < 0) {
    return Bad(origin, field + ".span_mib", "spans must be >= 0 (0: not stated)");
  }
  if (!s.stated()) return absl::OkStatus();
  if (s.span_bytes <= 0 || s.wide_span_bytes <= s.span_bytes) {
    return Bad(origin, field + ".wide_span_mib",
               "must be larger than span_mib, which must be stated with it");
  }
  if (absl::Status st = CheckRange(origin, field + ".wide_gemv_gb_s", s.wide_gemv_bytes_per_s,
                                   kGemvRate);
      !st.ok()) {
    return st;
  }
  return CheckRange(origin, field + ".wide_gemv_alone_gb_s", s.wide_gemv_alone_bytes_per_s,
                    kGemvRate, /*zero_ok=*/true);
}

absl::Status DeviceProfile::Validate(const std::string& origin) const {
  if (name.empty()) return Bad(origin, "name", "must be set");
  bool random = false, sequential = false;
  for (size_t i = 0; i < flash.points.size(); ++i) {
    const FlashPoint& p = flash.points[i];
    std::string field = absl::StrCat("flash.points[", i, "]");
    if (p.request_bytes <= 0 || p.request_bytes > (int64_t{1} << 32)) {
      return Bad(origin, field + ".request_bytes", "must be in (0, 4 GiB]");
    }
    if (absl::Status s = CheckRange(origin, field + ".throughput_mb_s",
                                    p.throughput_bytes_per_s, kFlashRate);
        !s.ok()) {
      return s;
    }
    if (p.queue_depth < 0 || p.queue_depth > 65536) {
      return Bad(origin, field + ".queue_depth", "must be in [0, 65536]");
    }
    if (p.range_bytes < 0) return Bad(origin, field + ".range_bytes", "must be >= 0");
    (p.sequential ? sequential : random) = true;
  }
  if (!random) return Bad(origin, "flash.points", "needs at least one random-read point");
  if (!sequential) return Bad(origin, "flash.points", "needs at least one sequential point");
  if (flash.command_queue_depth <= 0 || flash.command_queue_depth > 65536) {
    return Bad(origin, "flash.command_queue_depth", "must be in [1, 65536]");
  }
  if (!In(flash.multi_issuer_penalty, 0, 0.999)) {
    return Bad(origin, "flash.multi_issuer_penalty", "must be in [0, 1)");
  }
  for (auto [name, v] : {std::pair{"flash.submit_overhead_us", flash.submit_overhead_ns},
                         std::pair{"flash.resubmit_gap_us", flash.resubmit_gap_ns}}) {
    if (absl::Status s = CheckRange(origin, name, v, kOverhead); !s.ok()) return s;
  }
  if (flash.read_ahead_kb < 4 || flash.read_ahead_kb > (1 << 20) || flash.read_ahead_kb % 4 != 0) {
    return Bad(origin, "flash.read_ahead_kb", "must be a multiple of 4 in [4, 1048576] KiB");
  }
  if (flash.max_request_kb < 4 || flash.max_request_kb > (1 << 20) ||
      flash.max_request_kb % 4 != 0) {
    return Bad(origin, "flash.max_request_kb", "must be a multiple of 4 in [4, 1048576] KiB");
  }
  if (cores.empty()) return Bad(origin, "cores", "needs at least one core class");
  if (cores.size() > 64) return Bad(origin, "cores", "at most 64 core classes");
  for (size_t i = 0; i < cores.size(); ++i) {
    const CoreClassSpec& c = cores[i];
    std::string field = absl::StrCat("cores[", i, "]");
    if (c.name.empty() || c.count <= 0 || c.count > 1024) {
      return Bad(origin, field, "needs a name and a count in [1, 1024]");
    }
    if (absl::Status s =
            CheckKernelRates(origin, field, c.gemv_bytes_per_s, c.dense_gemv_bytes_per_s,
                             c.gemv_alone_bytes_per_s, c.dense_gemv_alone_bytes_per_s);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckRange(origin, field + ".dense_gops", c.dense_ops_per_s, kCoreOps);
        !s.ok()) {
      return s;
    }
    for (size_t j = 0; j < c.kernel_rates.size(); ++j) {
      const KernelRateSpec& k = c.kernel_rates[j];
      const std::string at = absl::StrCat(field, ".kernel_rates[", j, "]");
      if (k.format.empty()) return Bad(origin, at + ".format", "names a weight format (int4-g16)");
      for (size_t i = 0; i < j; ++i) {
        if (c.kernel_rates[i].format == k.format) {
          return Bad(origin, at + ".format", absl::StrCat("'", k.format, "' is listed twice"));
        }
      }
      if (absl::Status s =
              CheckKernelRates(origin, at, k.gemv_bytes_per_s, k.dense_gemv_bytes_per_s,
                               k.gemv_alone_bytes_per_s, k.dense_gemv_alone_bytes_per_s);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = CheckScatterSpan(origin, at, k.span); !s.ok()) return s;
      if (absl::Status s = CheckRange(origin, at + ".call_us", k.call_ns, kOverhead); !s.ok()) {
        return s;
      }
    }
    if (!In(c.io_issue_factor, 1e-3, 1e3)) {
      return Bad(origin, field + ".io_issue_factor", "must be in [0.001, 1000]");
    }
    for (auto [name, v] : {std::pair{".task_dispatch_us", c.task_dispatch_ns},
                           std::pair{".queued_task_us", c.queued_task_ns.value_or(0)},
                           std::pair{".idle_wake_us", c.idle_wake_ns},
                           std::pair{".idle_window_us", c.idle_window_ns}}) {
      if (absl::Status s = CheckRange(origin, field + name, v, kOverhead); !s.ok()) return s;
    }
    if (absl::Status s = CheckRange(origin, field + ".active_w", c.active_w, kPower); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckRange(origin, "dram.cpu_gb_s", dram.cpu_bytes_per_s, kDramRate);
      !s.ok()) {
    return s;
  }
  for (auto [name, v] : {std::pair{"dram.npu_gb_s", dram.npu_bytes_per_s},
                         std::pair{"dram.combined_gb_s", dram.combined_bytes_per_s},
                         std::pair{"dram.rewrite_gb_s", dram.rewrite_bytes_per_s}}) {
    if (absl::Status s = CheckRange(origin, name, v, kDramRate, /*zero_ok=*/true); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckRange(origin, "dram.app_available_bytes",
                                  static_cast<double>(dram.app_available_bytes), kMemory);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange(origin, "dram.capacity_bytes",
                                  static_cast<double>(dram.capacity_bytes), kMemory,
                                  /*zero_ok=*/true);
      !s.ok()) {
    return s;
  }
  if (npu.present) {
    if (absl::Status s = CheckRange(origin, "npu.dense_tops", npu.dense_ops_per_s, kNpuOps);
        !s.ok()) {
      return s;
    }
  }
  if (dram.page_cache != "lru" && dram.page_cache != "mglru") {
    return Bad(origin, "dram.page_cache", "must be \"lru\" or \"mglru\"");
  }
  for (auto [name, w] : {std::pair{"base_w", base_w}, std::pair{"flash.active_w", flash.active_w},
                         std::pair{"npu.active_w", npu.active_w}}) {
    if (absl::Status s = CheckRange(origin, name, w, kPower); !s.ok()) return s;
  }
  if (!In(dram.energy_joules_per_byte, 0, 1e-6)) {
    return Bad(origin, "dram.energy_pj_per_byte", "must be in [0, 1e6] pJ");
  }
  if (absl::Status s =
          CheckRange(origin, "npu.launch_overhead_us", npu.launch_overhead_ns, kOverhead);
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

}  // namespace sparseflash
