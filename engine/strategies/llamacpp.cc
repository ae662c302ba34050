// llamacpp: llama.cpp as the PowerInfer-2 baseline (reference/techniques.md
// section 3): dense compute, weights mmap'ed, so they live in the kernel's page
// cache. The cache is modelled as read-ahead windows of the weight file with the
// budget left after the anonymous memory (KV cache, buffers), replaced as the
// device's kernel does (`page_cache`: strict LRU, which re-reads the whole file
// every token once it does not fit, or the refault protection of the
// multi-generational LRU, which keeps part of it). The window is the device's
// read-ahead (`read_ahead_kb`, /sys/block/DEV/queue/read_ahead_kb), doubled
// because llama.cpp advises the file POSIX_FADV_SEQUENTIAL. Each compute thread
// faults on its part of each matrix: its first missing window is a blocking
// read-around, after which the kernel's asynchronous read-ahead streams the
// part's next windows while the thread computes (a thread reaching a window's
// marker page starts the next read, so two windows are in flight), and a
// thread waits only for the reads its compute has caught up with. The kernel
// sends a window as requests of at most the device's largest request
// (`max_request_kb`, /sys/block/DEV/queue/max_sectors_kb), all in flight
// together: the device's queue holds the faulting threads' windows' requests.
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
            .io_issuers = threads_,
            .uses_npu = false};  // faulting threads read for themselves
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

  // The threads share the windows of `ranges` (contiguous parts each); a thread
  // reads its missing windows one by one, then computes. The file has one
  // read-ahead stream: when the first thread's first missing window is the one
  // after the previous scan's last read, the kernel requested it while the
  // previous scan ran (its reader passed the marker), so that read does not
  // wait for the previous scan's compute; the other threads fault on their
  // parts' starts at once. The plan issues it once the previous part's first
  // window is in, so at a scan's boundary three windows can be in flight
  // where the kernel keeps two: a device that gains from depth beyond two
  // windows is priced a little fast there.
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
    std::vector<NodeId> ends;
    const int64_t n = static_cast<int64_t>(windows.size());
    for (int t = 0; t < threads_; ++t) {
      const int64_t begin = n * t / threads_, end = n * (t + 1) / threads_;
      int64_t misses = 0, first_miss = -1, last_miss = -1;
      for (int64_t i = begin; i < end; ++i) {
        if (cache_->Access(static_cast<CacheKey>(windows[i]), window_)) continue;
        ++misses;
        if (first_miss < 0) first_miss = windows[i];
        last_miss = windows[i];
      }
      const int64_t part = n == 0 ? 0 : bytes * (end - begin) / n;
      const int64_t offset = begin < n ? windows[begin] * window_ : 0;
      const NodeId read_after =
          t == 0 && misses > 0 && first_miss == previous.next_window ? previous.read : kNoNode;
      NodeId first_read = kNoNode;
      ends.push_back(PlanThreadPart(kind, misses, end - begin, part, offset, after, read_after,
                                    plan, &first_read));
      if (misses > 0) stream_ = {.next_window = last_miss + 1, .read = first_read};
    }
    NodeId done = plan->Join(ends);
    plan->Depend(done, after);
    return done;
  }

  // One thread's part of a scan: `windows` windows of which `misses` are read,
  // `bytes` of compute. The first window's read blocks the thread; the rest
  // stream ahead of it (two windows in flight per thread: the one it waits for
  // and the next), overlapped with the compute of all but the last window,
  // which waits for the last read. A window is read as requests_per_window_
  // requests of request_ bytes. The part starts at file offset `offset`. Its
  // first read waits for `read_after` instead of `after` where that is a node
  // (read ahead by the stream); its node goes to *first_read.
  NodeId PlanThreadPart(ComputeKind kind, int64_t misses, int64_t windows, int64_t bytes,
                        int64_t offset, NodeId after, NodeId read_after, WorkPlan* plan,
                        NodeId* first_read) {
    const ComputeTask compute{
        .kind = kind, .unit = ComputeUnit::kCpu, .file_offset = offset, .in_order = true};
    if (misses == 0) {
      ComputeTask all = compute;
      all.bytes = bytes;
      return plan->Compute(all, {after});
    }
    FlashRead read{.request_bytes = request_,
                   .count = requests_per_window_,
                   .max_in_flight = requests_per_window_,
                   .sequential = true,
                   .range_bytes = FileBytes(),
                   .fills_cache = true,
                   .page_cache = mapped_};
    const NodeId first = plan->Read(read, {read_after != kNoNode ? read_after : after});
    *first_read = first;
    NodeId streamed = first;
    if (misses > 1) {
      read.count = static_cast<int32_t>((misses - 1) * requests_per_window_);
      read.max_in_flight = 2 * requests_per_window_;
      streamed = plan->Read(read, {first});
    }
    const int64_t last_bytes = bytes / std::max<int64_t>(1, windows);
    ComputeTask body = compute, last = compute;
    body.bytes = bytes - last_bytes;
    last.bytes = last_bytes;
    last.file_offset = offset + body.bytes;
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
  // after the last one read, and the read that started it (kNoNode: none).
  struct Stream {
    int64_t next_window = -1;
    NodeId read = kNoNode;
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
  const int threads = ReadThreads(opt, ctx, std::min(4, ctx.cpu_cores));
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
