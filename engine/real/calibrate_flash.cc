#include "engine/real/calibrate_flash.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/random.h"
#include "engine/real/calibrate.h"
#include "engine/real/calibrate_cpu.h"
#include "engine/real/completion_queue.h"
#include "engine/real/real_env.h"
#include "engine/real/weight_memory.h"

namespace sparseflash {
namespace calibration {
namespace {

struct Done : CompletionSink {
  bool ok = true, finished = false;
  void OnReadDone(uint64_t, bool good) override {
    ok = good;
    finished = true;
  }
  void OnComputeDone(uint64_t) override {}
};

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

// Faults in `bytes` from `offset` of the file at `path` through a mapping advised
// POSIX_FADV_SEQUENTIAL, as llama.cpp's threads fault in its weights: `threads`
// threads taking chunks of kFaultChunkBytes in turn, with the file's pages
// dropped before and after: the kernel's read-ahead, bytes/s. Fails when the
// kernel's count of bytes read shows the pages did not come from the device (a
// file system that ignores the drop).
constexpr int64_t kFaultChunkBytes = 144 << 10;  // 64 rows of a 4096-wide Q4_0 matrix

absl::StatusOr<double> MeasureMappedReadAhead(const std::string& path, int64_t offset,
                                              int64_t bytes, int threads) {
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
  std::atomic<int64_t> next{0};
  auto fault = [&] {
    for (int64_t at; (at = next.fetch_add(kFaultChunkBytes)) < bytes;) {
      const int64_t end = std::min(bytes, at + kFaultChunkBytes);
      for (int64_t p = at; p < end; p += 4096) (void)page[p];
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(fault);
  fault();
  for (std::thread& t : others) t.join();
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

// Throughput of one batch of reads of `size` at queue depth `depth` through the
// real device. With `*batch_reads` 0 the batch first grows until it lasts
// `seconds_target` and `*batch_reads` gets its size; otherwise that size is used.
absl::StatusOr<ReadRate> MeasureReads(const std::string& path, int64_t file_bytes, int64_t size,
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
  WeightMemory buffer;
  int64_t capacity = 0;
  // One timed batch of `count` reads, bytes/s. The buffer is mapped and touched
  // before the clock starts: a fresh buffer would make every O_DIRECT read fault
  // in its pages first, and the engine reuses its read buffers. It is weight
  // memory, as the engine's window cache and large read buffers are: on huge
  // pages a read larger than the device's segment limit is not split.
  auto batch = [&]() -> absl::StatusOr<ReadRate> {
    if (int64_t{count} * size > capacity) {
      buffer.reset();
      capacity = int64_t{count} * size;
      buffer = AllocateWeightMemory(capacity);
      if (!buffer) return absl::ResourceExhaustedError("cannot allocate read buffers");
      std::memset(buffer.get(), 0, capacity);
    }
    auto target = std::make_shared<ReadTarget>();
    target->buffer = buffer.get();
    const int64_t start = rng.Below(static_cast<uint32_t>(std::max<int64_t>(1, slots - count)));
    for (int i = 0; i < count; ++i) {
      target->offsets.push_back((sequential ? start + i : rng.Below(slots)) * size);
    }
    done = Done();
    const Nanos busy0 = (*dev)->busy_time(), held0 = (*dev)->held_time();
    const auto t0 = std::chrono::steady_clock::now();
    (*dev)->Submit({.request_bytes = size,
                    .count = count,
                    .max_in_flight = depth,
                    .sequential = sequential,
                    .target = target});
    while (!done.finished) queue.Pop()();
    if (!done.ok)
      return absl::DataLossError(absl::StrCat(path, ": read failed during calibration"));
    const double seconds = Seconds(t0);
    const double busy = static_cast<double>(((*dev)->busy_time() - busy0).ns);
    const double held = static_cast<double>(((*dev)->held_time() - held0).ns);
    return ReadRate{.bytes_per_s = static_cast<double>(count) * size / seconds,
                    .mean_in_flight = busy > 0 ? held / busy : 0};
  };
  // Grow the batch until one lasts `seconds_target`.
  for (int round = 0; *batch_reads == 0 && round < 8; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<ReadRate> tp = batch();
    if (!tp.ok()) return tp.status();
    const double s = Seconds(t0);
    if (s >= seconds_target) break;
    count = static_cast<int>(std::min<double>(count * std::max(2.0, seconds_target / s),
                                              std::min<int64_t>(slots, (256 << 20) / size)));
  }
  *batch_reads = count;
  return batch();
}

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

// The kernel's read-ahead as llamacpp plans it: windows of twice the device's
// read-ahead (llama.cpp advises POSIX_FADV_SEQUENTIAL), each sent as requests
// of at most the device's largest request, and the next window's behind them
// while the reader waits: a sequential point at that request size with two
// windows' requests in flight. Measured through the page cache itself, as a
// mapped file is read, which is what such a reader gets from the device: the
// median of reads of `bytes` at seven places spread over a file of `file_bytes`.
ReadAheadShape ReadAheadOf(const FlashSpec& flash) {
  return PlanReadAhead(flash.read_ahead_kb, /*fadvise_sequential=*/true, flash.max_request_kb);
}

absl::StatusOr<FlashPoint> MeasureReadAhead(const std::string& path, int64_t file_bytes,
                                            int64_t bytes, const FlashSpec& flash, int threads,
                                            const std::string& date) {
  const ReadAheadShape shape = ReadAheadOf(flash);
  const int64_t window = shape.window_bytes, request = shape.request_bytes;
  const int per_window = shape.requests_per_window;
  std::vector<double> runs;
  // Seven places spread over the file: on a virtual disk single reads of the
  // same size ranged from 0.6 to 2.1 GB/s (the file's start was slow every
  // time), so three gave medians 1.26 and 1.84 GB/s ten minutes apart.
  constexpr int kPlaces = 7;
  for (int pass = 0; pass < kPlaces; ++pass) {
    const int64_t offset = (file_bytes - bytes) * pass / (kPlaces - 1) / 4096 * 4096;
    absl::StatusOr<double> tp = MeasureMappedReadAhead(path, offset, bytes, threads);
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
                                           window >> 10, " KiB) by ", threads, " threads taking ",
                                           kFaultChunkBytes >> 10,
                                           " KiB chunks in turn, median of ", kPlaces, " places"),
                    .page_cache = true};
}

absl::StatusOr<std::vector<FlashPoint>> MeasureDirectWindows(const std::string& path,
                                                             int64_t file_bytes,
                                                             const FlashSpec& flash, double seconds,
                                                             std::string* notice,
                                                             const std::string& date) {
  const ReadAheadShape shape = ReadAheadOf(flash);
  std::vector<FlashPoint> points;
  for (int windows : {1, 2}) {
    const int depth = windows * shape.requests_per_window;
    std::vector<double> runs;
    int batch_reads = 0;
    for (int pass = 0; pass < 3; ++pass) {
      absl::StatusOr<ReadRate> tp = MeasureReads(path, file_bytes, shape.request_bytes, depth, true,
                                                 seconds, notice, &batch_reads);
      if (!tp.ok()) return tp.status();
      runs.push_back(tp->bytes_per_s);
    }
    points.push_back({.request_bytes = shape.request_bytes,
                      .queue_depth = depth,
                      .sequential = true,
                      .throughput_bytes_per_s = calibration::Median(runs),
                      .source = absl::StrCat("measured ", date, ": O_DIRECT, ", windows,
                                             " read-ahead window(s) of ", shape.window_bytes >> 10,
                                             " KiB in flight, median of 3")});
  }
  return points;
}

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

}  // namespace calibration

using calibration::BlockQueueKb;

void FitMonotoneInDepth(std::vector<FlashPoint>& points) {
  std::map<std::tuple<int64_t, bool, int64_t, bool>, std::vector<FlashPoint*>> series;
  for (FlashPoint& p : points) {
    series[{p.request_bytes, p.sequential, p.range_bytes, p.page_cache}].push_back(&p);
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

int BlockDeviceReadAheadKb(const std::string& path) {
  return BlockQueueKb(path, "read_ahead_kb", /*bdi=*/true);
}

int BlockDeviceMaxRequestKb(const std::string& path) {
  return BlockQueueKb(path, "max_sectors_kb", /*bdi=*/false);
}

}  // namespace sparseflash
