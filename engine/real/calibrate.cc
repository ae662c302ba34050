#include "engine/real/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/units.h"
#include "engine/real/calibrate_cpu.h"
#include "engine/real/calibrate_flash.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/real/storage_warmup.h"
#include "engine/strategies/strategies.h"
#include "traces/model_spec.h"

namespace sparseflash {
namespace {

using calibration::CpuGhz;
using calibration::CpuModel;
using calibration::kKernelShape;
using calibration::MeasureCopy;
using calibration::MeasureDirectWindows;
using calibration::MeasureDramRead;
using calibration::MeasureFormats;
using calibration::MeasureHandOff;
using calibration::MeasureReadAhead;
using calibration::MeasureReads;
using calibration::MeasureResubmitGapNs;
using calibration::MeasureSubmitOverheadNs;
using calibration::Median;
using calibration::MemInfo;
using calibration::ReadableFileBytes;
using calibration::ReadRate;
using calibration::WriteScratch;

}  // namespace

absl::StatusOr<DeviceProfile> CalibrateHost(const CalibrateOptions& o) {
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  int64_t file_bytes = o.quick ? (int64_t{1} << 30) : (int64_t{4} << 30);
  const bool scratch = o.read_file.empty();
  const std::string path = scratch ? (std::filesystem::path(o.scratch_dir) /
                                      absl::StrCat("sparseflash-calibrate-", getpid()))
                                         .string()
                                   : o.read_file;
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty()) RemoveQuietly(path);
    }
  } cleanup{scratch ? path : ""};
  // DRAM first, before this calibration writes or reads a file: the kernel's
  // write-back and read-ahead would share the cores with it (MeasureDramRead).
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t dram_bytes = (o.quick ? 256 : 1024) << 20;
  say("DRAM read and copy");
  const calibration::DramReadRates dram = MeasureDramRead(cores, dram_bytes, o.quick ? 7 : 9);
  const double one = dram.one, all = dram.all;
  const double copy = MeasureCopy(dram_bytes / 2);
  if (scratch) {
    say(absl::StrCat("writing a ", file_bytes >> 20, " MiB scratch file in ", o.scratch_dir));
    if (absl::Status s = WriteScratch(path, file_bytes); !s.ok()) return s;
  } else {
    absl::StatusOr<int64_t> size = ReadableFileBytes(path);
    if (!size.ok()) return size.status();
    file_bytes = *size;
    say(absl::StrCat("measuring reads of ", path, " (", file_bytes >> 20, " MiB, only read)"));
  }

  DeviceProfile d;
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  char host[256] = "host";
  gethostname(host, sizeof host);
  d.name = "host";
  d.description = absl::StrCat(host, ": ", CpuModel(), ", ", cores, " cores, ",
                               MemInfo("MemTotal") >> 30, " GiB");
  d.soc = CpuModel();
  d.measured_on = date;
  d.sources = absl::StrCat("sparseflash device calibrate", o.quick ? " --quick" : "", " on ", date);
  d.flash.interface = scratch ? "scratch file in " + o.scratch_dir : "the file " + path;
  d.flash.command_queue_depth = 64;
  d.flash.command_queues = 1;
  d.flash.multi_issuer_penalty = 0;
  d.flash.source = "measured with io_uring, O_DIRECT";
  // Storage that caches what was read (a virtual disk's host) is measured as
  // the runs will find it: after their weight file, or the scratch file, has
  // been read once (replay reads its weight file once before it starts).
  say(absl::StrCat("reading ", path, " once, in order, before measuring"));
  absl::StatusOr<StorageWarmup> warm = ReadFileOnce(
      path, [&](int64_t done) { say(absl::StrCat("  ", FormatBytes(done), " read")); });
  if (!warm.ok()) return warm.status();
  say(warm->direct ? absl::StrFormat("  %s in %.1f s", FormatBytes(warm->bytes), warm->seconds)
                   : "  not read: the file system refuses O_DIRECT");
  if (warm->direct) {
    absl::StrAppend(&d.flash.source, ", after one sequential read of the file (",
                    absl::StrFormat("%.0f", warm->bytes_per_s() / 1e6), " MB/s)");
  }
  const std::vector<int64_t> sizes =
      // 8 KiB even when quick: a gated INT4 neuron's padded bundle, which the
      // sparse strategies read (between 4 and 16 KiB the rate is far from
      // either: 391 MB/s measured against 326 interpolated here).
      o.quick ? std::vector<int64_t>{4096, 8192, 16384, 65536, 524288}
              : std::vector<int64_t>{4096, 8192, 16384, 32768, 65536, 131072, 524288, 1048576};
  const std::vector<int> depths =
      o.quick ? std::vector<int>{1, 4, 16, 64} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  const double seconds = o.quick ? 0.05 : 0.15;
  std::string notice;
  // Every point is measured in three passes spread over the calibration and
  // given the median: a disk whose speed drifts over minutes (shared or virtual
  // storage) then biases no point more than another.
  struct Pending {
    int64_t size;
    int depth;
    int batch_reads = 0;
    std::vector<double> runs;
    std::vector<double> held;  // mean reads in flight, per pass
  };
  std::vector<Pending> pending;
  for (int64_t size : sizes) {
    for (int depth : depths) pending.push_back({size, depth});
  }
  constexpr int kPasses = 3;
  for (int pass = 0; pass < kPasses; ++pass) {
    say(absl::StrFormat("flash, pass %d of %d", pass + 1, kPasses));
    for (Pending& p : pending) {
      absl::StatusOr<ReadRate> tp =
          MeasureReads(path, file_bytes, p.size, p.depth, false, seconds, &notice, &p.batch_reads);
      if (!tp.ok()) return tp.status();
      p.runs.push_back(tp->bytes_per_s);
      p.held.push_back(tp->mean_in_flight);
    }
  }
  for (Pending& p : pending) {
    std::sort(p.runs.begin(), p.runs.end());  // for the passes' range below
    const double tp = Median(p.runs), held = Median(p.held);
    d.flash.points.push_back(
        {.request_bytes = p.size,
         .queue_depth = p.depth,
         .range_bytes = file_bytes,
         .throughput_bytes_per_s = tp,
         .source = absl::StrFormat("measured %s, median of %d passes; %.1f reads in flight on "
                                   "average",
                                   date, kPasses, held)});
    say(absl::StrFormat("random %7d B at depth %2d: %8.1f MB/s (passes %.0f-%.0f), %.1f in flight",
                        p.size, p.depth, tp / 1e6, p.runs.front() / 1e6, p.runs.back() / 1e6,
                        held));
  }
  absl::StatusOr<double> submit = MeasureSubmitOverheadNs(
      path, file_bytes, d.flash.points.front().throughput_bytes_per_s, o.quick ? 200 : 1000);
  if (!submit.ok()) return submit.status();
  d.flash.submit_overhead_ns = *submit;
  say(absl::StrFormat("batch submit overhead %.1f us", *submit / 1e3));
  absl::StatusOr<double> gap = MeasureResubmitGapNs(path, file_bytes, o.quick ? 0.2 : 0.5, &notice);
  if (!gap.ok()) return gap.status();
  d.flash.resubmit_gap_ns = *gap;
  say(absl::StrFormat("resubmission gap %.1f us per read", *gap / 1e3));
  int seq_reads = 0;
  absl::StatusOr<ReadRate> seq =
      MeasureReads(path, file_bytes, 1 << 20, 8, true, seconds * 2, &notice, &seq_reads);
  if (!seq.ok()) return seq.status();
  d.flash.points.push_back({.request_bytes = 1 << 20,
                            .queue_depth = 8,
                            .sequential = true,
                            .throughput_bytes_per_s = seq->bytes_per_s,
                            .source = absl::StrCat("measured ", date)});
  say(absl::StrFormat("sequential 1 MiB at depth 8: %.1f MB/s", seq->bytes_per_s / 1e6));
  if (const int ra = BlockDeviceReadAheadKb(path); ra > 0) {
    d.flash.read_ahead_kb = ra;
    say(absl::StrFormat("kernel read-ahead %d KiB", ra));
  } else {
    say(absl::StrFormat("kernel read-ahead not readable for %s: the Linux default %d KiB",
                        o.scratch_dir, kDefaultReadAheadKb));
  }
  if (const int mr = BlockDeviceMaxRequestKb(path); mr > 0) {
    d.flash.max_request_kb = mr;
    say(absl::StrFormat("kernel's largest request %d KiB", mr));
  } else {
    say(absl::StrFormat("kernel's largest request not readable for %s: the Linux default %d KiB",
                        o.scratch_dir, kDefaultMaxRequestKb));
  }
  // Faulted by as many threads as llamacpp computes with by default.
  const int faulting = DefaultComputeThreads(cores);
  absl::StatusOr<FlashPoint> read_ahead = MeasureReadAhead(
      path, file_bytes, std::min(file_bytes / 4, int64_t{512} << 20), d.flash, faulting, date);
  if (read_ahead.ok()) {
    d.flash.points.push_back(*read_ahead);
    say(
        absl::StrFormat("kernel read-ahead of a mapped file, %d threads faulting: %.1f MB/s (%d "
                        "KiB requests, %d in flight)",
                        faulting, read_ahead->throughput_bytes_per_s / 1e6,
                        read_ahead->request_bytes >> 10, read_ahead->queue_depth));
  } else {
    say(absl::StrCat("kernel read-ahead not measured: ", read_ahead.status().message()));
  }
  absl::StatusOr<std::vector<FlashPoint>> windows =
      MeasureDirectWindows(path, file_bytes, d.flash, seconds * 2, &notice, date);
  if (!windows.ok()) return windows.status();
  for (const FlashPoint& p : *windows) {
    d.flash.points.push_back(p);
    say(absl::StrFormat("the same windows read directly, %d KiB requests, %d in flight: %.1f MB/s",
                        p.request_bytes >> 10, p.queue_depth, p.throughput_bytes_per_s / 1e6));
  }
  if (!notice.empty()) say(notice);
  FitMonotoneInDepth(d.flash.points);

  // Each kernel rate the median of three passes, the two access patterns
  // interleaved, so a drift in the machine's speed biases neither. The core's
  // own rates are its INT4 g32 entry.
  const double kernel_seconds = o.quick ? 0.2 : 0.6;
  // Scattered bundles over 512 MiB, and (not --quick) over up to 4 GiB as a
  // 7B model's FFN weights spread, leaving two thirds of the free memory.
  const int64_t span = int64_t{512} << 20;
  const int64_t wide =
      o.quick ? 0 : std::min<int64_t>(int64_t{4} << 30, MemInfo("MemAvailable") / 3) >> 20 << 20;
  std::vector<std::string> spreads;
  std::vector<KernelRateSpec> formats =
      MeasureFormats(kernel_seconds, cores, all, span, wide >= 2 * span ? wide : 0, &spreads);
  const std::string own_format =
      Quantization{.kind = QuantKind::kInt4, .group_size = kKernelShape.group}.Name();
  const auto own_it = std::find_if(formats.begin(), formats.end(),
                                   [&](const KernelRateSpec& k) { return k.format == own_format; });
  if (own_it == formats.end()) {
    return absl::InternalError(absl::StrCat("calibration measured no ", own_format, " kernel"));
  }
  const KernelRateSpec own = *own_it;
  for (const KernelRateSpec& k : formats) {
    say(absl::StrFormat(
        "%s: sparse FFN kernel %.2f GB/s per core over scattered bundles, dense "
        "GEMV %.2f in order (one core alone: %.2f, %.2f); %.1f us per call",
        k.format, k.gemv_bytes_per_s / 1e9, k.dense_gemv_bytes_per_s / 1e9,
        k.gemv_alone_bytes_per_s / 1e9, k.dense_gemv_alone_bytes_per_s / 1e9, k.call_ns / 1e3));
    if (k.span.stated()) {
      say(absl::StrFormat("%s: scattered over %s: %.2f GB/s per core (alone %.2f); over %s: %.2f",
                          k.format, FormatBytes(k.span.wide_span_bytes),
                          k.span.wide_gemv_bytes_per_s / 1e9,
                          k.span.wide_gemv_alone_bytes_per_s / 1e9, FormatBytes(k.span.span_bytes),
                          k.gemv_bytes_per_s / 1e9));
    }
  }
  for (const std::string& line : spreads) say(absl::StrCat("passes: ", line));
  const calibration::HandOff hand_off = MeasureHandOff(o.quick ? 60 : 200);
  say(absl::StrFormat(
      "DRAM read %.1f GB/s (1 thread), %.1f GB/s (%d); copy %.1f GB/s; "
      "all %d cores at once: sparse FFN kernel %.2f GB/s per core over "
      "scattered bundles, dense GEMV %.2f in order (%s); task hand-off %.1f us, %.1f us more "
      "after a wait of over %.0f us, %.1f us for a task queued behind another",
      one / 1e9, all / 1e9, cores, copy / 1e9, cores, own.gemv_bytes_per_s / 1e9,
      own.dense_gemv_bytes_per_s / 1e9, SparseFfnTarget(kKernelShape), hand_off.dispatch_ns / 1e3,
      hand_off.idle_wake_ns / 1e3, hand_off.idle_window_ns / 1e3, hand_off.queued_ns / 1e3));
  CoreClassSpec core;
  core.name = "host";
  core.count = cores;
  core.ghz = CpuGhz();
  core.io_issue_factor = 1;
  core.gemv_bytes_per_s = own.gemv_bytes_per_s;
  core.dense_gemv_bytes_per_s = own.dense_gemv_bytes_per_s;
  core.gemv_alone_bytes_per_s = own.gemv_alone_bytes_per_s;
  core.dense_gemv_alone_bytes_per_s = own.dense_gemv_alone_bytes_per_s;
  // INT4: 2 weights per byte, 2 operations per weight.
  core.dense_ops_per_s = 4 * own.gemv_bytes_per_s;
  core.task_dispatch_ns = hand_off.dispatch_ns;
  core.idle_wake_ns = hand_off.idle_wake_ns;
  core.idle_window_ns = hand_off.idle_window_ns;
  core.queued_task_ns = hand_off.queued_ns;
  core.kernel_rates = std::move(formats);
  core.source = absl::StrCat(
      "sparse FFN kernel and dense GEMV (", SparseFfnTarget(kKernelShape), ") measured ", date,
      ", every core computing at once: the FFN kernel over random bundles (gemv), "
      "the GEMV over consecutive rows (dense_gemv), INT4 g32 and per format "
      "(kernel_rates), scattered rates over 512 MiB and, where measured, over a wider span "
      "(wide_span_mib), each format's fixed cost per call (call_us) from calls of 32 and "
      "512 random bundles from DRAM; "
      "dense_gops = 4 x kernel bytes/s [derived]; lowest-highest of the three passes, GB/s "
      "per core: ",
      absl::StrJoin(spreads, "; "));
  d.cores.push_back(core);
  d.dram.capacity_bytes = MemInfo("MemTotal");
  d.dram.app_available_bytes = MemInfo("MemAvailable");
  d.dram.cpu_bytes_per_s = all;
  d.dram.combined_bytes_per_s = all;
  d.dram.npu_bytes_per_s = 0;
  d.dram.rewrite_bytes_per_s = copy;
  d.dram.source = absl::StrCat("measured ", date);
  if (absl::Status s = d.Validate("calibrated profile"); !s.ok()) return s;
  return d;
}

}  // namespace sparseflash
