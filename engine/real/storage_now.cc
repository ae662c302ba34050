#include "engine/real/storage_now.h"

#include <cmath>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/real/calibrate_cpu.h"
#include "engine/real/calibrate_flash.h"
#include "engine/real/compute_now.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

// The point of `flash` read through the page cache (the mapped read-ahead); null without one.
const FlashPoint* MappedPoint(const FlashSpec& flash) {
  for (const FlashPoint& p : flash.points) {
    if (p.page_cache) return &p;
  }
  return nullptr;
}

// A bundle read: what the sparse strategies read most.
constexpr double kReferenceBytes = 8192, kReferenceDepth = 32;

// Faulted in per place by the mapped check: half of calibration's 512 MiB.
constexpr int64_t kMappedCheckBytes = int64_t{256} << 20;

}  // namespace

const FlashPoint* StorageReferencePoint(const FlashSpec& flash) {
  const FlashPoint* best = nullptr;
  double best_distance = 0;
  for (const FlashPoint& p : flash.points) {
    if (p.sequential || p.page_cache || p.request_bytes <= 0 || p.queue_depth <= 0) continue;
    const double distance =
        std::fabs(std::log2(static_cast<double>(p.request_bytes) / kReferenceBytes)) +
        std::fabs(std::log2(p.queue_depth / kReferenceDepth));
    if (best == nullptr || distance < best_distance) {
      best = &p;
      best_distance = distance;
    }
  }
  return best;
}

absl::Status CheckStorageComparable(const DeviceProfile& profile, bool mapped) {
  const FlashPoint* point = StorageReferencePoint(profile.flash);
  if (point == nullptr || point->throughput_bytes_per_s <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the --device profile '", profile.name,
        "' states no flash.points of random O_DIRECT reads (request_bytes, queue_depth): "
        "calibrate this machine (sparseflash device calibrate) to compare its storage now"));
  }
  const FlashPoint* mapped_point = MappedPoint(profile.flash);
  if (mapped && (mapped_point == nullptr || mapped_point->throughput_bytes_per_s <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the --device profile '", profile.name,
        "' states no flash.points with page_cache: true (the read-ahead of a mapped file): "
        "calibrate this machine with device calibrate --file to compare its mapped reads now"));
  }
  return absl::OkStatus();
}

absl::StatusOr<StorageNow> MeasureStorageNow(const DeviceProfile& profile, const std::string& path,
                                             double seconds, bool mapped) {
  if (absl::Status s = CheckStorageComparable(profile, mapped); !s.ok()) return s;
  const FlashPoint* point = StorageReferencePoint(profile.flash);
  const FlashPoint* mapped_point = MappedPoint(profile.flash);
  absl::StatusOr<int64_t> file_bytes = calibration::ReadableFileBytes(path);
  if (!file_bytes.ok()) return file_bytes.status();
  std::vector<double> passes;
  int batch_reads = 0;
  std::string notice;
  for (int pass = 0; pass < 3; ++pass) {
    absl::StatusOr<calibration::ReadRate> rate =
        calibration::MeasureReads(path, *file_bytes, point->request_bytes, point->queue_depth,
                                  /*sequential=*/false, seconds, &notice, &batch_reads);
    if (!rate.ok()) return rate.status();
    passes.push_back(rate->bytes_per_s);
  }
  const double direct = calibration::Median(passes);
  StorageNow now;
  now.direct = direct / point->throughput_bytes_per_s;
  now.summary =
      absl::StrFormat("storage now, MB/s (profile's): %d KiB random reads at depth %d %.0f (%.0f)",
                      point->request_bytes >> 10, point->queue_depth, direct / 1e6,
                      point->throughput_bytes_per_s / 1e6);
  if (mapped) {
    const int threads =
        DefaultComputeThreads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    absl::StatusOr<FlashPoint> read_ahead = calibration::MeasureReadAhead(
        path, *file_bytes, std::min(*file_bytes / 4, kMappedCheckBytes), profile.flash, threads,
        "now");
    if (!read_ahead.ok()) return read_ahead.status();
    now.mapped = read_ahead->throughput_bytes_per_s / mapped_point->throughput_bytes_per_s;
    absl::StrAppendFormat(&now.summary, ", a mapped file's read-ahead %.0f (%.0f)",
                          read_ahead->throughput_bytes_per_s / 1e6,
                          mapped_point->throughput_bytes_per_s / 1e6);
  }
  return now;
}

StorageNow StorageAroundRun(const StorageNow& before, const StorageNow& after) {
  return {.direct = std::sqrt(before.direct * after.direct),
          .mapped = std::sqrt(before.mapped * after.mapped),
          .summary = AroundRunSummary(before.summary, after.summary)};
}

DeviceProfile WithStorageNow(DeviceProfile profile, const StorageNow& now) {
  for (FlashPoint& p : profile.flash.points) {
    const double ratio = p.page_cache ? now.mapped : now.direct;
    if (ratio == 1) continue;
    p.throughput_bytes_per_s *= ratio;
    absl::StrAppend(&p.source, "; scaled to this machine's storage now (", now.summary, ")");
  }
  return profile;
}

}  // namespace sparseflash
