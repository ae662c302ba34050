#include "engine/real/real_run.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/random.h"
#include "common/units.h"
#include "engine/real/mapped_weights.h"
#include "engine/real/proc_stats.h"
#include "engine/real/real_env.h"
#include "engine/real/sparse_ffn_kernel.h"
#include "engine/real/weight_memory.h"

namespace sparseflash {
namespace {

using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

// Read buffers: the read fills them, so they are not touched first. Those of a
// huge page or more are weight memory (huge pages where the kernel has them):
// an O_DIRECT read larger than the device's segment limit (max_segments pages
// of 4 KiB: 254 on a virtio disk, under 1 MiB) into scattered 4 KiB pages is
// split into several requests, into contiguous huge pages it is not, as the
// window cache's reads and the calibration's are not.
Buffer Allocate(int64_t bytes) {
  if (bytes >= WeightMemoryBytes(1)) return AllocateWeightMemory(bytes);
  void* p = nullptr;
  if (posix_memalign(&p, 4096, std::max<int64_t>(bytes, 4096)) != 0) return nullptr;
  return Buffer(static_cast<uint8_t*>(p));
}

// Memory that must really be resident (the budget): `bundles` bundles of
// synthetic weights (FillUnitBundles), every byte written, on huge pages where
// the kernel has them, as the kernels read weights (AllocateWeightMemory).
Buffer AllocateUnitBundles(const FfnKernelShape& shape, int64_t bundles) {
  Buffer p = AllocateWeightMemory(bundles * shape.bundle_bytes());
  if (p) FillUnitBundles(shape, p.get(), bundles);
  return p;
}

// A region lent a batch at a time (first fit): the part of the cache's memory
// that reads filling the cache land in (those reads take no memory beside the
// cache's, and no compute task reads the part: RealizingCompute::
// SetAsideForReads), and the read buffers' arena (ReadBufferPool).
class FillZone {
 public:
  FillZone() = default;
  FillZone(uint8_t* base, int64_t bytes) : base_(base), bytes_(bytes) {}
  // A free range of `bytes` (4096-aligned) for batch `tag`, or null.
  uint8_t* Take(uint64_t tag, int64_t bytes) {
    bytes = (bytes + 4095) / 4096 * 4096;
    int64_t at = 0;
    for (const auto& [offset, length] : used_) {
      if (offset - at >= bytes) break;
      at = offset + length;
    }
    if (base_ == nullptr || at + bytes > bytes_) return nullptr;
    used_.emplace(at, bytes);
    lent_.emplace(tag, at);
    return base_ + at;
  }
  // Frees batch `tag`'s range; false when it has none here.
  bool Give(uint64_t tag) {
    auto it = lent_.find(tag);
    if (it == lent_.end()) return false;
    used_.erase(it->second);
    lent_.erase(it);
    return true;
  }

 private:
  uint8_t* base_ = nullptr;
  int64_t bytes_ = 0;
  std::map<int64_t, int64_t> used_;   // offset -> bytes
  std::map<uint64_t, int64_t> lent_;  // batch tag -> offset
};

// Read buffers, reused: a finished batch's buffer serves a later batch, so
// O_DIRECT reads land in pages already mapped (as a page cache's would be)
// instead of faulting in fresh memory for every batch. Batches first take a
// range of a small arena of weight memory (huge pages, as the window cache's
// and the calibration's reads land in: into 4 KiB pages the development VM's
// 8 KiB reads ran 5-15 % slower); a batch the arena cannot hold gets a buffer
// of its own. Keeps at most as many of those as were ever in flight at once.
class ReadBufferPool {
 public:
  static constexpr int64_t kArenaBytes = int64_t{8} << 20;

  uint8_t* Take(uint64_t tag, int64_t bytes) {
    if (!arena_tried_) {  // once: where it fails, every batch gets a buffer of its own
      arena_tried_ = true;
      arena_ = AllocateWeightMemory(kArenaBytes);
      if (arena_) zone_ = FillZone(arena_.get(), kArenaBytes);
    }
    if (uint8_t* p = zone_.Take(tag, bytes)) return p;
    auto it = free_.lower_bound(bytes);
    Buffer buffer;
    int64_t capacity = bytes;
    if (it != free_.end()) {
      capacity = it->first;
      buffer = std::move(it->second);
      free_.erase(it);
    } else {
      // None is large enough: the largest free one is replaced, so the pool never
      // holds more buffers than were lent at once.
      if (!free_.empty()) free_.erase(std::prev(free_.end()));
      buffer = Allocate(bytes);
      if (!buffer) return nullptr;
    }
    uint8_t* p = buffer.get();
    lent_.emplace(tag, std::make_pair(capacity, std::move(buffer)));
    return p;
  }
  void Give(uint64_t tag) {
    if (zone_.Give(tag)) return;
    auto it = lent_.find(tag);
    if (it == lent_.end()) return;
    free_.emplace(it->second.first, std::move(it->second.second));
    lent_.erase(it);
  }

 private:
  bool arena_tried_ = false;
  WeightMemory arena_;
  FillZone zone_;
  std::multimap<int64_t, Buffer> free_;                  // by capacity
  std::map<uint64_t, std::pair<int64_t, Buffer>> lent_;  // by batch tag
};

// Gives reads without a target real offsets in the weight file and a buffer.
class RealizingFlash : public FlashDevice, public CompletionSink {
 public:
  RealizingFlash(std::unique_ptr<FlashDevice> inner, const WeightFileInfo& w)
      : inner_(std::move(inner)), w_(w), rng_(11) {}
  ~RealizingFlash() override { inner_.reset(); }  // reads finish before the buffers go
  void SetSink(CompletionSink* sink) override {
    sink_ = sink;
    inner_->SetSink(this);
  }
  // Reads that fill the cache land in `zone` where a batch fits there.
  void SetFillZone(FillZone zone) { zone_ = std::move(zone); }
  void Submit(const FlashRead& read) override {
    FlashRead r = read;
    if (!r.target) {
      auto target = std::make_shared<ReadTarget>();
      const int64_t bytes = int64_t{r.count} * r.request_bytes;
      if (r.fills_cache) target->buffer = zone_.Take(r.tag, bytes);
      // Out of memory leaves no buffer: the device then fails the read (EFAULT) and the
      // engine reports it for that token.
      if (target->buffer == nullptr) target->buffer = buffers_.Take(r.tag, bytes);
      Place(r, &target->offsets);
      r.target = target;
    }
    inner_->Submit(r);
  }
  int64_t bytes_read() const override { return inner_->bytes_read(); }
  Nanos busy_time() const override { return inner_->busy_time(); }
  Nanos offered_time() const override { return inner_->offered_time(); }
  Nanos held_time() const override { return inner_->held_time(); }
  void OnReadDone(uint64_t tag, bool ok) override {
    if (!zone_.Give(tag)) buffers_.Give(tag);
    sink_->OnReadDone(tag, ok);
  }
  void OnComputeDone(uint64_t) override {}

 private:
  // Neuron-sized requests at random neurons (the right part of the bundle);
  // larger ones (windows, sequential layers) anywhere in the file, aligned.
  void Place(const FlashRead& r, std::vector<int64_t>* offsets) {
    const int64_t size = r.request_bytes;
    if (!r.sequential && size <= w_.neuron_stride) {
      const int64_t parts = std::max<int64_t>(1, w_.neuron_stride / size);
      for (int i = 0; i < r.count; ++i) {
        const int64_t neuron = rng_.Below(static_cast<uint32_t>(w_.neurons));
        offsets->push_back(w_.NeuronOffset(neuron) + (rng_.Below(parts)) * size);
      }
      return;
    }
    const int64_t slots = std::max<int64_t>(1, (w_.file_bytes - 4096) / size);
    int64_t start = rng_.Below(static_cast<uint32_t>(std::max<int64_t>(1, slots - r.count)));
    for (int i = 0; i < r.count; ++i) {
      const int64_t slot = r.sequential ? (start + i) % slots : rng_.Below(slots);
      offsets->push_back(4096 + slot * size);
    }
  }

  ReadBufferPool buffers_;  // outlives the device, whose destructor waits for its reads
  FillZone zone_;           // in the compute's arena, which outlives this device
  std::unique_ptr<FlashDevice> inner_;
  WeightFileInfo w_;
  Random rng_;
  CompletionSink* sink_ = nullptr;
};

// A compute worker's input, output and bundle list, reused from task to task,
// so a task pays the kernel's work and no allocation (as the engine's own
// kernel calls).
struct TaskBuffers {
  static TaskBuffers& Of(int d_model) {
    thread_local TaskBuffers b;
    if (b.x.size() != static_cast<size_t>(d_model)) {
      b.x.assign(d_model, 0.5f);
      b.out.assign(d_model, 0.0f);
    }
    return b;
  }
  std::vector<float> x, out, y;
  std::vector<const uint8_t*> bundles;
};

// Gives compute tasks without work the real kernel over the right bytes: with
// a mapped weight file, a task that says where its weights lie in the file
// computes over those pages of the mapping (faulting them in).
class RealizingCompute : public ComputeBackend {
 public:
  RealizingCompute(std::unique_ptr<ComputeBackend> inner, const ModelSpec& model,
                   int64_t arena_bytes, int64_t resident_bytes,
                   const MappedWeights* mapped = nullptr)
      : mapped_(mapped), inner_(std::move(inner)) {
    shape_ = KernelShapeOf(model);
    has_cache_ = arena_bytes >= shape_.bundle_bytes();
    arena_bundles_ = std::max<int64_t>(1, arena_bytes / shape_.bundle_bytes());
    sampled_arena_bundles_ = arena_bundles_;
    resident_bundles_ = std::max<int64_t>(1, resident_bytes / shape_.bundle_bytes());
    arena_ = AllocateUnitBundles(shape_, arena_bundles_);
    resident_ = AllocateUnitBundles(shape_, resident_bundles_);
  }
  bool ok() const { return arena_ && resident_; }
  // Sets the cache memory's second half apart for reads that fill the cache
  // (a page cache's pages under read): compute no longer reads it. Without a
  // cache, nothing.
  FillZone SetAsideForReads() {
    if (!has_cache_ || sampled_arena_bundles_ < 2) return FillZone();
    sampled_arena_bundles_ = arena_bundles_ / 2;
    const int64_t start = (sampled_arena_bundles_ * shape_.bundle_bytes() + 4095) / 4096 * 4096;
    const int64_t end = arena_bundles_ * shape_.bundle_bytes();
    return end > start ? FillZone(arena_.get() + start, end - start) : FillZone();
  }
  void SetSink(CompletionSink* sink) override { inner_->SetSink(sink); }
  void Submit(const ComputeTask& task) override {
    ComputeTask t = task;
    if (!t.work) t.work = Work(task);
    inner_->Submit(t);
  }
  int cpu_workers() const override { return inner_->cpu_workers(); }
  bool has_npu() const override { return false; }

 private:
  std::shared_ptr<const std::function<void()>> Work(const ComputeTask& task) {
    if (task.kind == ComputeKind::kMemoryManagement) {  // rows moved inside the cache
      const int64_t half = sampled_arena_bundles_ * shape_.bundle_bytes() / 2;
      const int64_t bytes = std::min(task.bytes, half);
      uint8_t* buf = arena_.get();
      return std::make_shared<const std::function<void()>>(
          [buf, bytes] { std::memmove(buf, buf + bytes, bytes); });
    }
    // Operations (prefill) as the kernel's bytes at 4 operations per byte.
    const int64_t bytes = task.ops > 0 ? static_cast<int64_t>(task.ops / 4) : task.bytes;
    if (mapped_ != nullptr && task.file_offset >= 0) {
      return MappedWork(task.file_offset, bytes, task.stripe, task.stripes);
    }
    // FFN weights live in the cache arena, or with the resident weights when the
    // strategy has no cache (in_memory): never a bundle or two reused from the
    // CPU's caches, which would pass the cache's speed off as DRAM's.
    const bool ffn = task.kind == ComputeKind::kFfn && has_cache_;
    const int64_t n = std::max<int64_t>(1, bytes / shape_.bundle_bytes());
    uint8_t* base = ffn ? arena_.get() : resident_.get();
    const int64_t pool = ffn ? sampled_arena_bundles_ : resident_bundles_;
    const int64_t first = (next_ += n) % pool;
    // A sparse FFN's active neurons lie scattered over its weights (or the
    // cache); dense work is a GEMV over consecutive rows.
    if (StreamsInOrder(task)) return GemvOver(base, pool, first, n);
    return KernelOver(base, pool, first, n);
  }

  // The dense GEMV over stripe `stripe` of `stripes` of the mapped file's
  // bytes x stripes from `offset` (wrapped into the file): chunks of 64 rows
  // (whole bundles), this task taking every stripes-th, as llama.cpp's threads
  // take a matrix's chunks in turn. The page faults are the reads.
  std::shared_ptr<const std::function<void()>> MappedWork(int64_t offset, int64_t bytes, int stripe,
                                                          int stripes) {
    const int64_t size = shape_.bundle_bytes();
    const int64_t pool = std::max<int64_t>(1, mapped_->size() / size);
    const int64_t first = offset / size, n = std::max<int64_t>(1, bytes / size);
    const int64_t rows_per_bundle = shape_.gated ? 3 : 2;
    const int64_t chunk = (64 + rows_per_bundle - 1) / rows_per_bundle;  // bundles
    const int64_t range = n * std::max(1, stripes);
    const FfnKernelShape shape = shape_;
    const uint8_t* base = mapped_->data();
    return std::make_shared<const std::function<void()>>([=] {
      TaskBuffers& b = TaskBuffers::Of(shape.d_model);
      ForEachStripeChunk(range, chunk, stripe, stripes, [&](int64_t at, int64_t count) {
        GemvRows(shape, base, pool, first + at, count, &b);
      });
    });
  }

  // The dense GEMV over the rows of `n` bundles of the `pool` bundles at
  // `base`, from bundle `first` on, wrapping around.
  std::shared_ptr<const std::function<void()>> GemvOver(const uint8_t* base, int64_t pool,
                                                        int64_t first, int64_t n) const {
    const FfnKernelShape shape = shape_;
    return std::make_shared<const std::function<void()>>(
        [=] { GemvRows(shape, base, pool, first, n, &TaskBuffers::Of(shape.d_model)); });
  }

  // The dense GEMV over the rows of `n` bundles of the `pool` bundles at
  // `base`, from bundle `first` on, wrapping around, into b's buffers.
  static void GemvRows(const FfnKernelShape& shape, const uint8_t* base, int64_t pool,
                       int64_t first, int64_t n, TaskBuffers* b) {
    const int64_t rows_per_bundle = shape.gated ? 3 : 2;
    if (b->y.size() < static_cast<size_t>(rows_per_bundle * std::min(n, pool))) {
      b->y.resize(rows_per_bundle * std::min(n, pool));
    }
    for (int64_t done = 0; done < n;) {
      const int64_t at = (first + done) % pool;
      const int64_t run = std::min(n - done, pool - at);
      DenseGemv(shape, base + at * shape.bundle_bytes(), run * rows_per_bundle, b->x.data(),
                b->y.data());
      done += run;
    }
  }

  // The sparse FFN kernel over `n` bundles drawn at random (seeded by `first`)
  // from the `pool` bundles at `base`.
  std::shared_ptr<const std::function<void()>> KernelOver(const uint8_t* base, int64_t pool,
                                                          int64_t first, int64_t n) const {
    const FfnKernelShape shape = shape_;
    return std::make_shared<const std::function<void()>>([=] {
      TaskBuffers& b = TaskBuffers::Of(shape.d_model);
      b.bundles.resize(static_cast<size_t>(n));
      Random rng(static_cast<uint64_t>(first) + 1);
      for (int64_t k = 0; k < n; ++k) {
        b.bundles[k] = base + rng.Below(static_cast<uint32_t>(pool)) * shape.bundle_bytes();
      }
      SparseFfn(shape, b.bundles.data(), static_cast<int>(n), b.x.data(), b.out.data());
    });
  }

  FfnKernelShape shape_;
  const MappedWeights* mapped_;
  bool has_cache_ = false;
  int64_t arena_bundles_ = 0, resident_bundles_ = 0, next_ = 0;
  int64_t sampled_arena_bundles_ = 0;  // of the arena, the bundles compute reads
  Buffer arena_, resident_;            // outlive the workers, whose destructor runs queued tasks
  std::unique_ptr<ComputeBackend> inner_;
};

}  // namespace

FfnKernelShape KernelShapeOf(const ModelSpec& model) {
  const Quantization& q = model.quantization;
  const bool integer = q.kind == QuantKind::kInt4 || q.kind == QuantKind::kInt8;
  FfnKernelShape s{.d_model = model.d_model - model.d_model % 64,
                   .group = 32,
                   .bits = 4,
                   .gated = model.ffn_type == FfnType::kGated};
  if (integer && q.group_size > 0 && q.group_size % 16 == 0 && s.d_model % q.group_size == 0) {
    s.group = q.group_size;
    s.bits = q.kind == QuantKind::kInt4 ? 4 : 8;
  }
  return s;
}

absl::StatusOr<RealRunResult> RunReal(RunSetup& setup, const ModelSpec& model,
                                      const RealRunOptions& o) {
  absl::StatusOr<WeightFileInfo> weights = ReadWeightFileHeader(o.weights_path, model);
  if (!weights.ok()) return weights.status();
  RealRunResult result;
  result.memory = setup.strategy->memory();
  const ResourcePlan resources = setup.strategy->resources();
  CompletionQueue queue;
  std::unique_ptr<MappedWeights> mapped;
  std::unique_ptr<FlashDevice> flash;         // what the engine reads through
  RealizingFlash* realizing_flash = nullptr;  // flash, when reads get buffers here
  if (o.page_faults) {
    absl::StatusOr<std::unique_ptr<MappedWeights>> m = MappedWeights::Open(o.weights_path);
    if (!m.ok()) return m.status();
    mapped = *std::move(m);
    flash = std::make_unique<PageFaultFlash>(&queue);
  } else {
    absl::StatusOr<std::unique_ptr<FlashDevice>> device =
        OpenFlashDevice({.path = o.weights_path,
                         .queue_depth = o.io_depth,
                         .io = o.io,
                         .deny_uring_for_test = o.deny_uring_for_test},
                        &queue, &result.notice);
    if (!device.ok()) return device.status();
    if (o.wrap_flash) *device = o.wrap_flash(*std::move(device));
    auto realizing = std::make_unique<RealizingFlash>(*std::move(device), *weights);
    realizing_flash = realizing.get();
    flash = std::move(realizing);
  }
  // Mapped, the page cache is the kernel's: no arena of our own. The plan's
  // read buffers are the read batches' own (RealizingFlash lends them).
  auto compute = std::make_unique<RealizingCompute>(
      std::make_unique<ThreadPoolCompute>(resources.compute_threads, &queue), model,
      mapped ? 0 : result.memory.cache_bytes,
      result.memory.resident_bytes - result.memory.read_buffer_bytes, mapped.get());
  if (!compute->ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate the memory budget: ", FormatBytes(result.memory.resident_bytes),
        " resident + ", FormatBytes(result.memory.cache_bytes), " cache"));
  }
  // The device goes before the compute: reads still in flight may fill its arena.
  struct FlashFirst {
    std::unique_ptr<FlashDevice>& flash;
    ~FlashFirst() { flash.reset(); }
  } flash_first{flash};
  if (realizing_flash != nullptr && result.memory.reads_fill_cache) {
    realizing_flash->SetFillZone(compute->SetAsideForReads());
  }
  RealClock clock;
  Engine engine(Env{&clock, flash.get(), compute.get()}, setup.strategy.get(), setup.source.get(),
                EngineOptions{.max_tokens = setup.tokens});
  const int64_t kernel_before = ProcessStorageReadBytes();
  const double steal_before = StealSeconds();
  const auto started = std::chrono::steady_clock::now();
  if (absl::Status s = RunOnThisThread(engine, queue, o.stall_timeout); !s.ok()) return s;
  result.run_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double steal_after = StealSeconds();
  const int64_t kernel_after = ProcessStorageReadBytes();
  result.kernel_read_bytes =
      kernel_before < 0 || kernel_after < 0 ? -1 : kernel_after - kernel_before;
  result.steal_seconds =
      steal_before < 0 || steal_after < 0 ? -1 : std::max(0.0, steal_after - steal_before);
  result.engine_read_bytes = flash->bytes_read();
  result.record = engine.record();
  result.peak_rss_bytes = PeakRssBytes();
  result.huge_page_bytes = HugePageBytes();
  return result;
}

ModelSpec RealRunModel(ModelSpec model) {
  model.runtime_bytes = 0;
  return model;
}

absl::StatusOr<RunSetup> PrepareRealRun(const RunSetupConfig& given, int64_t* process_bytes) {
  *process_bytes = 0;
  RunSetupConfig config = given;
  config.model = RealRunModel(config.model);
  if (config.memory_bytes < 0) return PrepareRun(config);
  {
    absl::StatusOr<RunSetup> sizing = PrepareRun(config);
    if (!sizing.ok()) return sizing.status();
    const int64_t rss = ProcessStatusBytes("VmRSS");
    if (rss < 0) return absl::UnavailableError("cannot read VmRSS from /proc/self/status");
    *process_bytes = rss + kRealRunOverheadBytes;
  }  // its memory is freed for the run's own setup to reuse
  RunSetupConfig planned = config;
  planned.memory_bytes = config.memory_bytes - *process_bytes;
  const std::string spent = absl::StrCat(
      "of the --memory budget ", FormatBytes(config.memory_bytes), ", the process itself holds ",
      FormatBytes(*process_bytes), " (code, trace, profile and strategy state, plus ",
      FormatBytes(kRealRunOverheadBytes), " for I/O buffers and threads)");
  if (planned.memory_bytes <= 0) {
    return absl::ResourceExhaustedError(absl::StrCat(spent, ": nothing is left for weights"));
  }
  absl::StatusOr<RunSetup> setup = PrepareRun(planned);
  if (!setup.ok()) {
    return absl::Status(setup.status().code(),
                        absl::StrCat(spent, ", leaving ", FormatBytes(planned.memory_bytes),
                                     " for the strategy: ", setup.status().message()));
  }
  return setup;
}

}  // namespace sparseflash
