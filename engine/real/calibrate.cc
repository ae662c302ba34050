#include "engine/real/calibrate.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/random.h"
#include "common/units.h"
#include "engine/real/calibrate_cpu.h"
#include "engine/real/completion_queue.h"
#include "engine/real/real_env.h"
#include "engine/real/sparse_ffn_kernel.h"

namespace sparseflash {
namespace {

using calibration::CpuGhz;
using calibration::CpuModel;
using calibration::kKernelShape;
using calibration::MeasureCopy;
using calibration::MeasureDramRead;
using calibration::MeasureFormats;
using calibration::MeasureTaskDispatchNs;
using calibration::Median;
using calibration::MemInfo;
using calibration::Seconds;

// Writes `bytes` of random data (not zeros: no file system may elide them).
absl::Status WriteScratch(const std::string& path, int64_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::UnavailableError(absl::StrCat(path, ": cannot create"));
  std::vector<uint64_t> chunk((8 << 20) / 8);
  Random rng(7);
  for (int64_t done = 0; done < bytes; done += chunk.size() * 8) {
    for (uint64_t& v : chunk) v = rng.Next();
    if (std::fwrite(chunk.data(), 1, chunk.size() * 8, f) != chunk.size() * 8) {
      std::fclose(f);
      return absl::DataLossError(absl::StrCat(path, ": write failed (disk full?)"));
    }
  }
  // Flush before measuring: reads must not queue behind the write-back.
  if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) {
    std::fclose(f);
    return absl::DataLossError(absl::StrCat(path, ": flush failed (disk full?)"));
  }
  posix_fadvise(fileno(f), 0, 0, POSIX_FADV_DONTNEED);
  if (std::fclose(f) != 0) return absl::DataLossError(absl::StrCat(path, ": close failed"));
  return absl::OkStatus();
}

struct Done : CompletionSink {
  bool ok = true, finished = false;
  void OnReadDone(uint64_t, bool good) override {
    ok = good;
    finished = true;
  }
  void OnComputeDone(uint64_t) override {}
};

// Throughput of one batch of reads of `size` at queue depth `depth` through the
// real device. With `*batch_reads` 0 the batch first grows until it lasts
// `seconds_target` and `*batch_reads` gets its size; otherwise that size is used.
absl::StatusOr<double> MeasureReads(const std::string& path, int64_t file_bytes, int64_t size,
                                    int depth, bool sequential, double seconds_target,
                                    std::string* notice, int* batch_reads) {
  CompletionQueue queue;
  absl::StatusOr<std::unique_ptr<FlashDevice>> dev =
      OpenFlashDevice({.path = path, .queue_depth = depth, .io = "auto"}, &queue, notice);
  if (!dev.ok()) return dev.status();
  Done done;
  (*dev)->SetSink(&done);
  const int64_t slots = file_bytes / size;
  Random rng(size * 131 + depth + *batch_reads);
  int count = *batch_reads > 0 ? *batch_reads : std::max(depth * 4, 16);
  void* buffer = nullptr;
  int64_t capacity = 0;
  // One timed batch of `count` reads, bytes/s. The buffer is mapped and touched
  // before the clock starts: a fresh buffer would make every O_DIRECT read fault
  // in its pages first, and the engine reuses its read buffers.
  auto batch = [&]() -> absl::StatusOr<double> {
    if (int64_t{count} * size > capacity) {
      std::free(buffer);
      buffer = nullptr;
      capacity = int64_t{count} * size;
      if (posix_memalign(&buffer, 4096, capacity) != 0) {
        return absl::ResourceExhaustedError("cannot allocate read buffers");
      }
      std::memset(buffer, 0, capacity);
    }
    auto target = std::make_shared<ReadTarget>();
    target->buffer = static_cast<uint8_t*>(buffer);
    const int64_t start = rng.Below(static_cast<uint32_t>(std::max<int64_t>(1, slots - count)));
    for (int i = 0; i < count; ++i) {
      target->offsets.push_back((sequential ? start + i : rng.Below(slots)) * size);
    }
    done = Done();
    const auto t0 = std::chrono::steady_clock::now();
    (*dev)->Submit({.request_bytes = size,
                    .count = count,
                    .max_in_flight = depth,
                    .sequential = sequential,
                    .target = target});
    while (!done.finished) queue.Pop()();
    if (!done.ok)
      return absl::DataLossError(absl::StrCat(path, ": read failed during calibration"));
    return static_cast<double>(count) * size / Seconds(t0);
  };
  // Grow the batch until one lasts `seconds_target`.
  for (int round = 0; *batch_reads == 0 && round < 8; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<double> tp = batch();
    if (!tp.ok()) {
      std::free(buffer);
      return tp.status();
    }
    const double s = Seconds(t0);
    if (s >= seconds_target) break;
    count = static_cast<int>(std::min<double>(count * std::max(2.0, seconds_target / s),
                                              std::min<int64_t>(slots, (256 << 20) / size)));
  }
  *batch_reads = count;
  absl::StatusOr<double> tp = batch();
  std::free(buffer);
  return tp;
}

}  // namespace

void FitMonotoneInDepth(std::vector<FlashPoint>& points) {
  std::map<std::tuple<int64_t, bool, int64_t>, std::vector<FlashPoint*>> series;
  for (FlashPoint& p : points) {
    series[{p.request_bytes, p.sequential, p.range_bytes}].push_back(&p);
  }
  for (auto& [key, s] : series) {
    std::sort(s.begin(), s.end(), [](const FlashPoint* a, const FlashPoint* b) {
      return a->queue_depth < b->queue_depth;
    });
    // Pool adjacent violators: blocks of (mean, count), merged while decreasing.
    std::vector<std::pair<double, int>> blocks;
    for (const FlashPoint* p : s) {
      blocks.push_back({p->throughput_bytes_per_s, 1});
      while (blocks.size() > 1 && blocks[blocks.size() - 2].first > blocks.back().first) {
        auto [mean, n] = blocks.back();
        blocks.pop_back();
        auto& prev = blocks.back();
        prev.first = (prev.first * prev.second + mean * n) / (prev.second + n);
        prev.second += n;
      }
    }
    size_t i = 0;
    for (const auto& [mean, n] : blocks) {
      for (int k = 0; k < n; ++k, ++i) {
        if (s[i]->throughput_bytes_per_s != mean) {
          s[i]->source += absl::StrFormat(" (%.1f MB/s measured; monotone fit over depth)",
                                          s[i]->throughput_bytes_per_s / 1e6);
          s[i]->throughput_bytes_per_s = mean;
        }
      }
    }
  }
}

namespace {

// Median time of a batch of one 4 KiB read through the real device, each batch
// alone (the device idle, its submitter asleep), minus one read's device time at
// depth 1 from the throughput points (measured with long batches): what every
// batch costs beyond its reads.
absl::StatusOr<double> MeasureSubmitOverheadNs(const std::string& path, int64_t file_bytes,
                                               double read_4k_depth1_bytes_per_s, int batches) {
  CompletionQueue queue;
  std::string notice;
  absl::StatusOr<std::unique_ptr<FlashDevice>> dev =
      OpenFlashDevice({.path = path, .queue_depth = 1, .io = "auto"}, &queue, &notice);
  if (!dev.ok()) return dev.status();
  Done done;
  (*dev)->SetSink(&done);
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 4096, 4096) != 0) {
    return absl::ResourceExhaustedError("cannot allocate a read buffer");
  }
  Random rng(4096);
  std::vector<double> ns;
  for (int i = 0; i < batches && done.ok; ++i) {
    auto target = std::make_shared<ReadTarget>();
    target->buffer = static_cast<uint8_t*>(buffer);
    target->offsets.push_back(rng.Below(static_cast<uint32_t>(file_bytes / 4096)) * 4096);
    done = Done();
    const auto t0 = std::chrono::steady_clock::now();
    (*dev)->Submit({.request_bytes = 4096, .count = 1, .max_in_flight = 1, .target = target});
    while (!done.finished) queue.Pop()();
    ns.push_back(Seconds(t0) * 1e9);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::free(buffer);
  if (!done.ok) return absl::DataLossError(absl::StrCat(path, ": read failed during calibration"));
  return std::max(0.0, Median(ns) - 4096 / read_4k_depth1_bytes_per_s * 1e9);
}

// Milliseconds the block device holding `path` spent on reads (field 4 of
// /sys/dev/block/M:m/stat); -1 where there is no such file.
int64_t BlockReadTicksMs(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  std::ifstream in(
      absl::StrFormat("/sys/dev/block/%u:%u/stat", major(st.st_dev), minor(st.st_dev)));
  int64_t ios, merges, sectors, ticks;
  if (!(in >> ios >> merges >> sectors >> ticks)) return -1;
  return ticks;
}

// The turnaround inside a batch limited to one read in flight: the wall time of
// a long single-slot batch of 4 KiB reads minus what the block device reports it
// spent on them, per read. 0 with a notice where the device's counters are not
// readable (then the simulator charges no gap).
absl::StatusOr<double> MeasureResubmitGapNs(const std::string& path, int64_t file_bytes,
                                            double seconds, std::string* notice) {
  CompletionQueue queue;
  absl::StatusOr<std::unique_ptr<FlashDevice>> dev =
      OpenFlashDevice({.path = path, .queue_depth = 1, .io = "auto"}, &queue, notice);
  if (!dev.ok()) return dev.status();
  Done done;
  (*dev)->SetSink(&done);
  const int count = std::max(100, static_cast<int>(seconds * 5000));
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 4096, int64_t{count} * 4096) != 0) {
    return absl::ResourceExhaustedError("cannot allocate read buffers");
  }
  std::memset(buffer, 0, int64_t{count} * 4096);  // mapped before the clock starts
  auto target = std::make_shared<ReadTarget>();
  target->buffer = static_cast<uint8_t*>(buffer);
  Random rng(77);
  for (int i = 0; i < count; ++i) {
    target->offsets.push_back(rng.Below(static_cast<uint32_t>(file_bytes / 4096)) * 4096);
  }
  const int64_t ticks_before = BlockReadTicksMs(path);
  const auto t0 = std::chrono::steady_clock::now();
  (*dev)->Submit({.request_bytes = 4096, .count = count, .max_in_flight = 1, .target = target});
  while (!done.finished) queue.Pop()();
  const double wall_ns = Seconds(t0) * 1e9;
  const int64_t ticks_after = BlockReadTicksMs(path);
  std::free(buffer);
  if (!done.ok) return absl::DataLossError(absl::StrCat(path, ": read failed during calibration"));
  if (ticks_before < 0 || ticks_after < ticks_before) {
    *notice += " (no block-device counters for the scratch file: resubmission gap not measured)";
    return 0.0;
  }
  return std::max(0.0, (wall_ns - 1e6 * static_cast<double>(ticks_after - ticks_before)) / count);
}

// Faults in `bytes` from `offset` of the file at `path` through a mapping advised
// POSIX_FADV_SEQUENTIAL, as llama.cpp's threads fault in its weights, with the
// file's pages dropped before and after: the kernel's read-ahead, bytes/s.
// Fails when the kernel's count of bytes read shows the pages did not come
// from the device (a file system that ignores the drop).
absl::StatusOr<double> MeasureMappedReadAhead(const std::string& path, int64_t offset,
                                              int64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(path, ": cannot open"));
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, offset);
  if (map == MAP_FAILED) {
    ::close(fd);
    return absl::ResourceExhaustedError(absl::StrCat(path, ": cannot map ", bytes, " bytes"));
  }
  const int64_t read_before = ProcessStorageReadBytes();
  const auto t0 = std::chrono::steady_clock::now();
  const volatile uint8_t* page = static_cast<const uint8_t*>(map);
  for (int64_t at = 0; at < bytes; at += 4096) (void)page[at];
  const double seconds = Seconds(t0);
  const int64_t read = ProcessStorageReadBytes() - read_before;
  ::munmap(map, bytes);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (read_before >= 0 && read < bytes * 9 / 10) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": the kernel read ", read, " of ", bytes,
                     " mapped bytes: the page cache kept the file, so its read-ahead cannot be "
                     "measured"));
  }
  return static_cast<double>(bytes) / seconds;
}

// The kernel's read-ahead as llamacpp plans it: windows of twice the device's
// read-ahead (llama.cpp advises POSIX_FADV_SEQUENTIAL), each sent as requests
// of at most the device's largest request, and the next window's behind them
// while the reader waits: a sequential point at that request size with two
// windows' requests in flight. Measured through the page cache itself, as a
// mapped file is read, which is what such a reader gets from the device: the
// median of three reads of `bytes`, at three places of a file of `file_bytes`.
absl::StatusOr<FlashPoint> MeasureReadAhead(const std::string& path, int64_t file_bytes,
                                            int64_t bytes, const FlashSpec& flash,
                                            const std::string& date) {
  const int64_t window = int64_t{2} * flash.read_ahead_kb * 1024;
  const int64_t request = std::min<int64_t>(window, int64_t{flash.max_request_kb} * 1024);
  const int per_window = static_cast<int>((window + request - 1) / request);
  std::vector<double> runs;
  for (int pass = 0; pass < 3; ++pass) {
    const int64_t offset = (file_bytes - bytes) / 2 * pass / 4096 * 4096;
    absl::StatusOr<double> tp = MeasureMappedReadAhead(path, offset, bytes);
    if (!tp.ok()) return tp.status();
    runs.push_back(*tp);
  }
  return FlashPoint{.request_bytes = request,
                    .queue_depth = 2 * per_window,
                    .sequential = true,
                    .throughput_bytes_per_s = calibration::Median(runs),
                    .source = absl::StrCat("measured ", date, ": ", bytes >> 20,
                                           " MiB faulted in through a mapping advised "
                                           "POSIX_FADV_SEQUENTIAL (read-ahead windows of ",
                                           window >> 10, " KiB), median of 3")};
}

// One KiB value of the block device holding `path`: its queue/`attribute` (a
// partition's is its disk's), else (`bdi`) its backing device's; 0 where none
// is readable (a virtual file system).
int BlockQueueKb(const std::string& path, const std::string& attribute, bool bdi) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  const std::string dev = absl::StrFormat("%u:%u", major(st.st_dev), minor(st.st_dev));
  std::vector<std::string> files = {absl::StrCat("/sys/dev/block/", dev, "/queue/", attribute),
                                    absl::StrCat("/sys/dev/block/", dev, "/../queue/", attribute)};
  if (bdi) files.push_back(absl::StrCat("/sys/class/bdi/", dev, "/", attribute));
  for (const std::string& file : files) {
    std::ifstream in(file);
    int kb = 0;
    if (in >> kb && kb >= 4 && kb <= (1 << 20)) return kb - kb % 4;
  }
  return 0;
}

}  // namespace

int BlockDeviceReadAheadKb(const std::string& path) {
  return BlockQueueKb(path, "read_ahead_kb", /*bdi=*/true);
}

int BlockDeviceMaxRequestKb(const std::string& path) {
  return BlockQueueKb(path, "max_sectors_kb", /*bdi=*/false);
}

namespace {

// The whole MiBs of an existing file to measure, at least 256 of them.
absl::StatusOr<int64_t> ReadableFileBytes(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return absl::NotFoundError(absl::StrCat(path, ": ", error.message()));
  if (size < (uintmax_t{256} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes; measuring reads needs a file of at least 256 MiB"));
  }
  return static_cast<int64_t>(size >> 20 << 20);
}

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
  const int cores = std::max(1u, std::thread::hardware_concurrency());
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
  const std::vector<int64_t> sizes =
      o.quick ? std::vector<int64_t>{4096, 16384, 65536, 524288}
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
  };
  std::vector<Pending> pending;
  for (int64_t size : sizes) {
    for (int depth : depths) pending.push_back({size, depth});
  }
  constexpr int kPasses = 3;
  for (int pass = 0; pass < kPasses; ++pass) {
    say(absl::StrFormat("flash, pass %d of %d", pass + 1, kPasses));
    for (Pending& p : pending) {
      absl::StatusOr<double> tp =
          MeasureReads(path, file_bytes, p.size, p.depth, false, seconds, &notice, &p.batch_reads);
      if (!tp.ok()) return tp.status();
      p.runs.push_back(*tp);
    }
  }
  for (Pending& p : pending) {
    std::sort(p.runs.begin(), p.runs.end());  // for the passes' range below
    const double tp = Median(p.runs);
    d.flash.points.push_back(
        {.request_bytes = p.size,
         .queue_depth = p.depth,
         .range_bytes = file_bytes,
         .throughput_bytes_per_s = tp,
         .source = absl::StrCat("measured ", date, ", median of ", kPasses, " passes")});
    say(absl::StrFormat("random %7d B at depth %2d: %8.1f MB/s (passes %.0f-%.0f)", p.size, p.depth,
                        tp / 1e6, p.runs.front() / 1e6, p.runs.back() / 1e6));
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
  absl::StatusOr<double> seq =
      MeasureReads(path, file_bytes, 1 << 20, 8, true, seconds * 2, &notice, &seq_reads);
  if (!seq.ok()) return seq.status();
  d.flash.points.push_back({.request_bytes = 1 << 20,
                            .queue_depth = 8,
                            .sequential = true,
                            .throughput_bytes_per_s = *seq,
                            .source = absl::StrCat("measured ", date)});
  say(absl::StrFormat("sequential 1 MiB at depth 8: %.1f MB/s", *seq / 1e6));
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
  absl::StatusOr<FlashPoint> read_ahead =
      MeasureReadAhead(path, file_bytes, file_bytes / 4, d.flash, date);
  if (read_ahead.ok()) {
    d.flash.points.push_back(*read_ahead);
    say(
        absl::StrFormat("kernel read-ahead of a mapped file: %.1f MB/s (%d KiB requests, %d in "
                        "flight)",
                        read_ahead->throughput_bytes_per_s / 1e6, read_ahead->request_bytes >> 10,
                        read_ahead->queue_depth));
  } else {
    say(absl::StrCat("kernel read-ahead not measured: ", read_ahead.status().message()));
  }
  if (!notice.empty()) say(notice);
  FitMonotoneInDepth(d.flash.points);

  const int64_t dram_bytes = (o.quick ? 256 : 1024) << 20;
  const double one = MeasureDramRead(1, dram_bytes);
  const double all = MeasureDramRead(cores, dram_bytes);
  const double copy = MeasureCopy(dram_bytes / 2);
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
  const double dispatch_ns = MeasureTaskDispatchNs(cores, o.quick ? 200 : 1000);
  say(absl::StrFormat(
      "DRAM read %.1f GB/s (1 thread), %.1f GB/s (%d); copy %.1f GB/s; "
      "all %d cores at once: sparse FFN kernel %.2f GB/s per core over "
      "scattered bundles, dense GEMV %.2f in order (%s); task hand-off %.1f us",
      one / 1e9, all / 1e9, cores, copy / 1e9, cores, own.gemv_bytes_per_s / 1e9,
      own.dense_gemv_bytes_per_s / 1e9, SparseFfnTarget(kKernelShape), dispatch_ns / 1e3));
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
  core.task_dispatch_ns = dispatch_ns;
  core.kernel_rates = std::move(formats);
  core.source = absl::StrCat(
      "sparse FFN kernel and dense GEMV (", SparseFfnTarget(kKernelShape), ") measured ", date,
      ", every core computing at once: the FFN kernel over random bundles (gemv), "
      "the GEMV over consecutive rows (dense_gemv), INT4 g32 and per format "
      "(kernel_rates), scattered rates over 512 MiB and, where measured, over a wider span "
      "(wide_span_mib), each format's fixed cost per call (call_us) from calls held in "
      "the caches; "
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
