// llamacpp: llama.cpp as the PowerInfer-2 baseline (reference/techniques.md
// section 3): dense compute, weights mmap'ed, so they live in the kernel's page
// cache. The cache is modelled as read-ahead windows of the weight file with the
// budget left after the anonymous memory (KV cache, buffers), replaced as the
// device's kernel does (`page_cache`: strict LRU, which re-reads the whole file
// every token once it does not fit, or the refault protection of the
// multi-generational LRU, which keeps part of it). The window is the device's
// read-ahead (`read_ahead_kb`, /sys/block/DEV/queue/read_ahead_kb), doubled
// because llama.cpp advises the file POSIX_FADV_SEQUENTIAL. The compute
// threads share each matrix in chunks of 64 rows taken in turn (ggml's matrix
// multiplication), so their faults are one sequential stream: its first missing
// window is a blocking read-around, after which the kernel's asynchronous
// read-ahead streams the next windows while the threads compute (a reader
// reaching a window's marker page starts the next read, so two windows are in
// flight), and the threads wait only for the reads their compute has caught up
// with. The kernel sends a window as requests of at most the device's largest
// request (`max_request_kb`, /sys/block/DEV/queue/max_sectors_kb), all in
// flight together.
// Those reads are the kernel's (`mmap`, true: as llama.cpp maps its weights),
// priced from the profile's page-cache points where it has them; with
// mmap=false a real run reads the same windows itself with O_DIRECT, priced
// from the direct points.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/layer_costs.h"
#include "engine/neuron_cache.h"
#include "engine/read_ahead.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

class LlamaCpp : public Strategy {
 public:
  LlamaCpp(const StrategyContext& ctx, int threads, const ReadAheadShape& windows, bool mapped,
           std::unique_ptr<NeuronCache> cache, MemoryPlan memory)
      : ctx_(ctx),
        threads_(threads),
        mapped_(mapped),
        window_(windows.window_bytes),
        request_(windows.request_bytes),
        requests_per_window_(windows.requests_per_window),
        cache_(std::move(cache)),
        memory_(memory),
        costs_(ComputeLayerCosts(ctx.model, ctx.bytes)) {
    expert_bytes_ = costs_.layer_ffn_bytes / ctx.model.experts;
    layer_stride_ = costs_.attention_bytes + costs_.layer_ffn_bytes;
  }

  ResourcePlan resources() const override {
    return {.compute_threads = threads_,
            .io_core_class = "",
            .io_issuers = 1,
            .uses_npu = false};  // one stream: the kernel's read-ahead of the file
  }
  MemoryPlan memory() const override { return memory_; }
  CacheCounters counters() const override {
    return {cache_->stats().hits, cache_->stats().hits + cache_->stats().misses};
  }

  NodeId PlanPrefill(int tokens, WorkPlan* plan) override {
    const double resident = std::min(1.0, double(memory_.cache_bytes) / double(FileBytes()));
    // mmap: a layer's pages fault in when its compute touches them.
    const LayerReads reads{.bytes_per_layer = static_cast<int64_t>((1 - resident) * layer_stride_),
                           .request_bytes = window_,
                           .lookahead_layers = 0,
                           .page_cache = mapped_};
    return PlanDensePrefill(costs_, tokens, ComputeUnit::kCpu, threads_, reads, plan);
  }

  NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) override {
    stream_ = {};  // a new plan: no read of it is running yet
    NodeId prev = kNoNode;
    for (int l = 0; l < costs_.layers; ++l) {
      const NodeId first = static_cast<NodeId>(plan->size());
      const int64_t base = int64_t{l} * layer_stride_;
      prev = PlanScan({{base, costs_.attention_bytes}}, costs_.kv_bytes_per_token * position,
                      ComputeKind::kAttention, prev, plan);
      std::vector<Range> ffn;
      for (const NeuronSet& set : token.layers[l].experts) {
        ffn.push_back({base + costs_.attention_bytes + set.expert * expert_bytes_, expert_bytes_});
      }
      prev = PlanScan(ffn, 0, ComputeKind::kFfn, prev, plan);
      plan->StampLayer(first, l);
    }
    return PlanScan({{costs_.layers * layer_stride_, costs_.head_bytes}}, 0, ComputeKind::kOther,
                    prev, plan);
  }

 private:
  struct Range {
    int64_t offset, bytes;
  };

  int64_t FileBytes() const { return costs_.layers * layer_stride_ + costs_.head_bytes; }

  // The threads share each scan (the windows of `ranges`) as llama.cpp's do:
  // they take its chunks of 64 rows in turn, so their page faults are one
  // sequential stream through the file, whose read-ahead state the kernel
  // keeps per file. Its first missing window is a blocking read-around, which
  // every thread waits for; the kernel's asynchronous read-ahead then streams
  // the next windows while the threads compute (a reader reaching a window's
  // marker page starts the next read, so two windows are in flight), and the
  // threads wait only for the reads their compute has caught up with: a scan's
  // windows after its first stream once its readers have started it (`after`)
  // and its first window is in. When the first missing window is the one after
  // the previous scan's last read, the kernel requested it while the previous
  // scan ran (its reader passed the marker), so that read waits only for the
  // previous scan's first read: the stream runs on from one matrix into the
  // next. Within a scan the reads are not held back by the compute: where
  // compute is the slower, they run further ahead than the kernel's two
  // windows.
  NodeId PlanScan(const std::vector<Range>& ranges, int64_t extra_bytes, ComputeKind kind,
                  NodeId after, WorkPlan* plan) {
    const Stream previous = stream_;
    std::vector<int64_t> windows;
    int64_t bytes = extra_bytes;
    for (const Range& r : ranges) {
      for (int64_t w = r.offset / window_; w * window_ < r.offset + r.bytes; ++w) {
        windows.push_back(w);
      }
      bytes += r.bytes;
    }
    int64_t misses = 0, first_miss = -1, last_miss = -1;
    for (int64_t w : windows) {
      if (cache_->Access(static_cast<CacheKey>(w), window_)) continue;
      ++misses;
      if (first_miss < 0) first_miss = w;
      last_miss = w;
    }
    NodeId first = kNoNode, streamed = kNoNode;
    if (misses > 0) {
      const NodeId read_after = first_miss == previous.next_window ? previous.marker : kNoNode;
      FlashRead read{.request_bytes = request_,
                     .count = requests_per_window_,
                     .max_in_flight = requests_per_window_,
                     .sequential = true,
                     .range_bytes = FileBytes(),
                     .fills_cache = true,
                     .page_cache = mapped_};
      first = plan->Read(read, {read_after != kNoNode ? read_after : after});
      streamed = first;
      if (misses > 1) {
        read.count = static_cast<int32_t>((misses - 1) * requests_per_window_);
        read.max_in_flight = 2 * requests_per_window_;
        streamed = plan->Read(read, {first, after});
      }
      stream_ = {.next_window = last_miss + 1, .marker = first};
    }
    const int64_t offset = windows.empty() ? 0 : windows.front() * window_;
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(windows.size()));
    std::vector<NodeId> ends;
    for (int t = 0; t < threads_; ++t) {
      const int64_t share = bytes * (t + 1) / threads_ - bytes * t / threads_;
      const ComputeTask compute{.kind = kind,
                                .unit = ComputeUnit::kCpu,
                                .file_offset = offset,
                                .stripe = static_cast<int16_t>(t),
                                .stripes = static_cast<int16_t>(threads_),
                                .in_order = true};
      ends.push_back(PlanThreadShare(compute, share, n, first, streamed, after, plan));
    }
    NodeId done = plan->Join(ends);
    plan->Depend(done, after);
    return done;
  }

  // One thread's `bytes` of a scan of `windows` windows. Without reads it
  // computes at once; else its compute of all but the last window waits for
  // the first read (`first`), and its last window's for the whole stream
  // (`streamed`).
  static NodeId PlanThreadShare(const ComputeTask& compute, int64_t bytes, int64_t windows,
                                NodeId first, NodeId streamed, NodeId after, WorkPlan* plan) {
    if (first == kNoNode) {
      ComputeTask all = compute;
      all.bytes = bytes;
      return plan->Compute(all, {after});
    }
    const int64_t last_bytes = bytes / windows;
    ComputeTask body = compute, last = compute;
    body.bytes = bytes - last_bytes;
    last.bytes = last_bytes;
    last.file_offset = compute.file_offset + body.bytes * compute.stripes;
    const NodeId computed = plan->Compute(body, {first, after});
    return plan->Compute(last, {computed, streamed});
  }

  StrategyContext ctx_;
  int threads_;
  bool mapped_;  // the kernel reads the windows (mmap)
  int64_t window_;
  int64_t request_;              // the bytes of one request (at most the device's largest)
  int32_t requests_per_window_;  // requests a window's read is split into
  // The file's read-ahead stream within the token being planned: the window
  // after the last one read, and the node after which the kernel sends it (the
  // last scan's first read; kNoNode: none).
  struct Stream {
    int64_t next_window = -1;
    NodeId marker = kNoNode;
  };
  Stream stream_;
  std::unique_ptr<NeuronCache> cache_;
  MemoryPlan memory_;
  LayerCosts costs_;
  int64_t expert_bytes_ = 0;
  int64_t layer_stride_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Strategy>> MakeLlamaCpp(StrategyOptions& opt,
                                                       const StrategyContext& ctx) {
  const ModelBytes& b = ctx.bytes;
  const int threads = ReadThreads(opt, ctx, DefaultComputeThreads(ctx.cpu_cores));
  // The device's read-ahead, doubled by llama.cpp's POSIX_FADV_SEQUENTIAL
  // (Linux sets the file's window to twice the device's) unless turned off.
  const int read_ahead_kb = opt.Int("read_ahead_kb", ctx.read_ahead_kb, 4, 1 << 20);
  const bool fadvise_sequential = opt.Bool("fadvise_sequential", true);
  // The device's largest request: a larger window goes out as several.
  const int max_request_kb = opt.Int("max_request_kb", ctx.max_request_kb, 4, 1 << 20);
  // Map the weight file and let the kernel page it in, as llama.cpp does (real
  // runs: RealRunOptions::page_faults); false: read the windows with O_DIRECT.
  // The plan is the same; only the flash points that price its reads differ.
  const bool mapped = opt.Bool("mmap", true);
  const ReadAheadShape windows = PlanReadAhead(read_ahead_kb, fadvise_sequential, max_request_kb);
  const int64_t window = windows.window_bytes;
  // The kernel's page cache: strict LRU, or refault-protected ("mglru", the
  // multi-generational LRU of Android's kernels); the device's by default.
  const std::string page_cache = opt.String("page_cache", ctx.page_cache);
  const std::string policy = ReadPolicy(opt, ctx, page_cache == "mglru" ? "workingset" : "lru");
  if (absl::Status st = opt.Check("llamacpp"); !st.ok()) return st;
  if (page_cache != "lru" && page_cache != "mglru") {
    return absl::InvalidArgumentError(
        absl::StrCat("llamacpp: page_cache='", page_cache, "' is not lru or mglru"));
  }
  if (window < 4096 || window % 4096 != 0) {
    return absl::InvalidArgumentError("llamacpp: read_ahead_kb must be a multiple of 4");
  }
  if (max_request_kb % 4 != 0) {
    return absl::InvalidArgumentError("llamacpp: max_request_kb must be a multiple of 4");
  }
  const int64_t anonymous = b.kv_bytes(ctx.context_tokens()) + b.runtime_bytes;
  const int64_t file = b.model_bytes();
  absl::StatusOr<int64_t> budget =
      ctx.ffn_resident >= 0
          ? CacheBudget(-1, ctx.ffn_resident, 0, b.ffn_bytes, "")
          : CacheBudget(ctx.memory_bytes, -1, anonymous, 0, "KV cache and runtime buffers");
  if (!budget.ok()) return budget.status();
  int64_t cache_bytes = ctx.ffn_resident >= 0 ? *budget + b.non_ffn_bytes() : *budget;
  cache_bytes = std::min(cache_bytes, file + window);
  NeuronCacheOptions co;
  co.key_space = static_cast<uint32_t>(file / window + 2);
  co.capacity_bytes = cache_bytes;
  co.policy = policy;
  co.entry_bytes = window;
  co.oracle = ctx.oracle;
  absl::StatusOr<std::unique_ptr<NeuronCache>> cache = NeuronCache::Create(co);
  if (!cache.ok()) return cache.status();
  return std::unique_ptr<Strategy>(new LlamaCpp(
      ctx, threads, windows, mapped, *std::move(cache),
      {.resident_bytes = anonymous, .cache_bytes = cache_bytes, .reads_fill_cache = true}));
}

}  // namespace sparseflash
