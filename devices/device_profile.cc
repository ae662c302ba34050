#include "devices/device_profile.h"

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

absl::Status DeviceProfile::Validate(const std::string& origin) const {
  if (name.empty()) return Bad(origin, "name", "must be set");
  bool random = false, sequential = false;
  for (size_t i = 0; i < flash.points.size(); ++i) {
    const FlashPoint& p = flash.points[i];
    std::string field = absl::StrCat("flash.points[", i, "]");
    if (p.request_bytes <= 0) return Bad(origin, field + ".request_bytes", "must be > 0");
    if (!(p.throughput_bytes_per_s > 0)) {
      return Bad(origin, field + ".throughput_mb_s", "must be > 0");
    }
    if (p.queue_depth < 0) return Bad(origin, field + ".queue_depth", "must be >= 0");
    (p.sequential ? sequential : random) = true;
  }
  if (!random) return Bad(origin, "flash.points", "needs at least one random-read point");
  if (!sequential) return Bad(origin, "flash.points", "needs at least one sequential point");
  if (flash.command_queue_depth <= 0) {
    return Bad(origin, "flash.command_queue_depth", "must be > 0");
  }
  if (!(flash.multi_issuer_penalty >= 0 && flash.multi_issuer_penalty < 1)) {
    return Bad(origin, "flash.multi_issuer_penalty", "must be in [0, 1)");
  }
  if (cores.empty()) return Bad(origin, "cores", "needs at least one core class");
  for (size_t i = 0; i < cores.size(); ++i) {
    const CoreClassSpec& c = cores[i];
    std::string field = absl::StrCat("cores[", i, "]");
    if (c.name.empty() || c.count <= 0) return Bad(origin, field, "needs a name and count > 0");
    if (!(c.gemv_bytes_per_s > 0)) return Bad(origin, field + ".gemv_gb_s", "must be > 0");
    if (!(c.dense_ops_per_s > 0)) return Bad(origin, field + ".dense_gops", "must be > 0");
    if (!(c.io_issue_factor > 0)) return Bad(origin, field + ".io_issue_factor", "must be > 0");
  }
  if (!(dram.cpu_bytes_per_s > 0)) return Bad(origin, "dram.cpu_gb_s", "must be > 0");
  if (dram.app_available_bytes <= 0) {
    return Bad(origin, "dram.app_available_bytes", "must be > 0");
  }
  if (npu.present && !(npu.dense_ops_per_s > 0)) {
    return Bad(origin, "npu.dense_tops", "must be > 0 when the NPU is present");
  }
  return absl::OkStatus();
}

}  // namespace sparseflash
