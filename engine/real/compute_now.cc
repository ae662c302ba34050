#include "engine/real/compute_now.h"

#include <cmath>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/real/calibrate_cpu.h"

namespace sparseflash {
namespace {

using calibration::KernelArena;
using calibration::kKernelShape;
using calibration::Median;

// The median of three passes of a kernel measurement.
double MedianOfThree(const KernelArena& arena, double seconds, bool in_order, int threads) {
  std::vector<double> passes;
  for (int pass = 0; pass < 3; ++pass) {
    passes.push_back(calibration::MeasureKernel(kKernelShape, arena, seconds, in_order, threads));
  }
  return Median(passes);
}

// now / stated; 1 where the profile states no rate.
double Ratio(double now, double stated) { return stated > 0 ? now / stated : 1; }

}  // namespace

absl::Status CheckComputeComparable(const DeviceProfile& profile) {
  if (profile.cores.empty() || profile.cores[0].gemv_bytes_per_s <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the --device profile '", profile.name,
        "' states no cores[0].gemv_bytes_per_s: "
        "calibrate this machine (sparseflash device calibrate) to compare its compute now"));
  }
  const std::string cpu = calibration::CpuModel();
  if (profile.soc != cpu) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the --device profile '", profile.name, "' is of soc '", profile.soc,
        "', not of this machine's '", cpu,
        "': its compute cannot be compared here (sparseflash device calibrate makes one)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ComputeNow> MeasureComputeNow(const DeviceProfile& profile, double seconds,
                                             int64_t span_bytes) {
  if (absl::Status s = CheckComputeComparable(profile); !s.ok()) return s;
  const CoreClassSpec& core = profile.cores[0];
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ComputeNow now;
  const KernelArena arena(kKernelShape, span_bytes);
  // As calibration: a core alone is never slower than with the others busy.
  const double gemv = MedianOfThree(arena, seconds, false, threads);
  const double dense = MedianOfThree(arena, seconds, true, threads);
  const double gemv_alone = std::max(gemv, MedianOfThree(arena, seconds, false, 1));
  const double dense_alone = std::max(dense, MedianOfThree(arena, seconds, true, 1));
  now.gemv = Ratio(gemv, core.gemv_bytes_per_s);
  now.dense_gemv = Ratio(dense, core.InOrderGemvRate());
  now.gemv_alone = Ratio(gemv_alone, core.gemv_alone_bytes_per_s);
  now.dense_gemv_alone = Ratio(dense_alone, core.dense_gemv_alone_bytes_per_s);
  now.summary = absl::StrFormat(
      "compute now, GB/s per core (profile's): sparse FFN kernel %.2f (%.2f), dense GEMV %.2f "
      "(%.2f), one core alone %.2f (%.2f) and %.2f (%.2f)",
      gemv / 1e9, core.gemv_bytes_per_s / 1e9, dense / 1e9, core.InOrderGemvRate() / 1e9,
      gemv_alone / 1e9, core.gemv_alone_bytes_per_s / 1e9, dense_alone / 1e9,
      core.dense_gemv_alone_bytes_per_s / 1e9);
  return now;
}

ComputeNow AroundRun(const ComputeNow& before, const ComputeNow& after) {
  auto mean = [](double a, double b) { return std::sqrt(a * b); };
  return {.gemv = mean(before.gemv, after.gemv),
          .dense_gemv = mean(before.dense_gemv, after.dense_gemv),
          .gemv_alone = mean(before.gemv_alone, after.gemv_alone),
          .dense_gemv_alone = mean(before.dense_gemv_alone, after.dense_gemv_alone),
          .summary = AroundRunSummary(before.summary, after.summary)};
}

std::string AroundRunSummary(const std::string& before, const std::string& after) {
  return absl::StrCat("before the run, ", before, "; after it, ", after);
}

DeviceProfile WithComputeNow(DeviceProfile profile, const ComputeNow& now) {
  auto scale_span = [&](ScatterSpanRates& s) {
    s.wide_gemv_bytes_per_s *= now.gemv;
    s.wide_gemv_alone_bytes_per_s *= now.gemv_alone;
  };
  for (CoreClassSpec& core : profile.cores) {
    core.gemv_bytes_per_s *= now.gemv;
    core.dense_gemv_bytes_per_s *= now.dense_gemv;
    core.gemv_alone_bytes_per_s *= now.gemv_alone;
    core.dense_gemv_alone_bytes_per_s *= now.dense_gemv_alone;
    core.dense_ops_per_s *= now.gemv;  // calibration derives it from the kernel rate
    scale_span(core.span);
    for (KernelRateSpec& k : core.kernel_rates) {
      k.gemv_bytes_per_s *= now.gemv;
      k.dense_gemv_bytes_per_s *= now.dense_gemv;
      k.gemv_alone_bytes_per_s *= now.gemv_alone;
      k.dense_gemv_alone_bytes_per_s *= now.dense_gemv_alone;
      scale_span(k.span);
    }
    absl::StrAppend(&core.source, "; rates scaled to this machine's now (", now.summary, ")");
  }
  return profile;
}

}  // namespace sparseflash
