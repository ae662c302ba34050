#include "devices/device_profile.h"

#include <algorithm>
#include <cmath>

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

constexpr double kMaxRate = 1e14;  // bytes or operations per second: 100 TB/s

// A core's (or one of its formats') kernel rates, named under `field`.
static absl::Status CheckKernelRates(const std::string& origin, const std::string& field,
                                     double gemv, double dense, double alone, double dense_alone) {
  if (!In(gemv, 1, kMaxRate)) return Bad(origin, field + ".gemv_gb_s", "must be > 0");
  if (dense != 0 && !In(dense, 1, kMaxRate)) {
    return Bad(origin, field + ".dense_gemv_gb_s", "must be > 0, or 0 (not stated)");
  }
  if (!In(alone, 0, kMaxRate) || !In(dense_alone, 0, kMaxRate)) {
    return Bad(origin, field + ".gemv_alone_gb_s", "alone rates must be >= 0 (0: not stated)");
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
  if (!In(s.wide_gemv_bytes_per_s, 1, kMaxRate) ||
      !In(s.wide_gemv_alone_bytes_per_s, 0, kMaxRate)) {
    return Bad(origin, field + ".wide_gemv_gb_s", "must be > 0 with wide_span_mib");
  }
  return absl::OkStatus();
}

absl::Status DeviceProfile::Validate(const std::string& origin) const {
  if (name.empty()) return Bad(origin, "name", "must be set");
  constexpr double kMaxOverheadNs = 1e9;
  bool random = false, sequential = false;
  for (size_t i = 0; i < flash.points.size(); ++i) {
    const FlashPoint& p = flash.points[i];
    std::string field = absl::StrCat("flash.points[", i, "]");
    if (p.request_bytes <= 0 || p.request_bytes > (int64_t{1} << 32)) {
      return Bad(origin, field + ".request_bytes", "must be in (0, 4 GiB]");
    }
    if (!In(p.throughput_bytes_per_s, 1, kMaxRate)) {
      return Bad(origin, field + ".throughput_mb_s", "must be in (0, 1e8] MB/s");
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
  if (!In(flash.submit_overhead_ns, 0, kMaxOverheadNs) ||
      !In(flash.resubmit_gap_ns, 0, kMaxOverheadNs)) {
    return Bad(origin, "flash.submit_overhead_us", "overheads must be in [0, 1 s]");
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
    if (!In(c.dense_ops_per_s, 1, kMaxRate))
      return Bad(origin, field + ".dense_gops", "must be > 0");
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
      if (!In(k.call_ns, 0, kMaxOverheadNs)) {
        return Bad(origin, at + ".call_us", "must be in [0, 1 s]");
      }
    }
    if (!In(c.io_issue_factor, 1e-3, 1e3)) {
      return Bad(origin, field + ".io_issue_factor", "must be in [0.001, 1000]");
    }
    if (!In(c.task_dispatch_ns, 0, kMaxOverheadNs)) {
      return Bad(origin, field + ".task_dispatch_us", "must be in [0, 1 s]");
    }
    if (c.queued_task_ns && !In(*c.queued_task_ns, 0, kMaxOverheadNs)) {
      return Bad(origin, field + ".queued_task_us", "must be in [0, 1 s]");
    }
    if (!In(c.idle_wake_ns, 0, kMaxOverheadNs)) {
      return Bad(origin, field + ".idle_wake_us", "must be in [0, 1 s]");
    }
    if (!In(c.idle_window_ns, 0, kMaxOverheadNs)) {
      return Bad(origin, field + ".idle_window_us", "must be in [0, 1 s]");
    }
  }
  if (!In(dram.cpu_bytes_per_s, 1, kMaxRate)) return Bad(origin, "dram.cpu_gb_s", "must be > 0");
  for (double rate : {dram.npu_bytes_per_s, dram.combined_bytes_per_s, dram.rewrite_bytes_per_s}) {
    if (!In(rate, 0, kMaxRate)) {
      return Bad(origin, "dram", "npu_gb_s, combined_gb_s and rewrite_gb_s must be in [0, 1e5]");
    }
  }
  if (dram.app_available_bytes <= 0) {
    return Bad(origin, "dram.app_available_bytes", "must be > 0");
  }
  if (npu.present && !In(npu.dense_ops_per_s, 1, kMaxRate * 100)) {
    return Bad(origin, "npu.dense_tops", "must be > 0 when the NPU is present");
  }
  if (dram.page_cache != "lru" && dram.page_cache != "mglru") {
    return Bad(origin, "dram.page_cache", "must be \"lru\" or \"mglru\"");
  }
  for (double w : {base_w, flash.active_w, npu.active_w}) {
    if (!In(w, 0, 1000)) return Bad(origin, "base_w", "powers must be in [0, 1000] W");
  }
  for (const CoreClassSpec& c : cores) {
    if (!In(c.active_w, 0, 1000)) return Bad(origin, "cores.active_w", "must be in [0, 1000] W");
  }
  if (!In(dram.energy_joules_per_byte, 0, 1e-6)) {
    return Bad(origin, "dram.energy_pj_per_byte", "must be in [0, 1e6] pJ");
  }
  if (!In(npu.launch_overhead_ns, 0, kMaxOverheadNs)) {
    return Bad(origin, "npu.launch_overhead_us", "must be in [0, 1 s]");
  }
  return absl::OkStatus();
}

}  // namespace sparseflash
