// powerinfer2: PowerInfer-2 v3 (reference/techniques.md section 1). Attention,
// KV cache, predictors and scales pinned; FFN neurons in a segmented cache (hot
// region from the offline profile, cold region per neuron under LRU); predicted
// cold neurons read as split bundles (gate 4 KB, then up/down 4 KB only for a
// non-zero gate) by one I/O submitter; a neuron-cluster pipeline over N compute
// threads; optionally the NPU computes the hot rows densely. Prefill runs dense
// on the NPU while one big core reads the next layer sequentially. With
// attention=flash, attention's weights are read too, a layer ahead, so a budget
// below the resident set fits.
#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "engine/classification_tape.h"
#include "engine/layer_costs.h"
#include "engine/predictor.h"
#include "engine/segmented_cache.h"
#include "engine/sparse_ffn.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

struct Settings {
  int threads;
  LayoutKind layout;
  PipelineMode pipeline;
  int cluster_neurons;
  int io_depth;
  bool npu;
  SegmentedCacheOptions cache;
  PredictorOptions predictor;
  LayerReads attention_reads;  // attention streamed from flash; none = resident
};

class PowerInfer2 : public Strategy {
 public:
  PowerInfer2(const StrategyContext& ctx, const Settings& s, NeuronReads reads,
              std::unique_ptr<SegmentedCache> cache, int64_t resident)
      : ctx_(ctx),
        s_(s),
        reads_(reads),
        cache_(std::move(cache)),
        resident_(resident),
        costs_(ComputeLayerCosts(ctx.model, ctx.bytes)),
        indexer_(ctx.model.layers, ctx.model.experts, ctx.model.d_ffn),
        predictor_(s.predictor, ctx.trace.has_predicted, ctx.model.layers * ctx.model.experts,
                   ctx.model.d_ffn) {
    if (s_.npu) PlanNpuRows();
    replayed_ = {cache_->hits(), cache_->accesses()};
  }

  ResourcePlan resources() const override {
    // Without the pipeline there is no I/O thread: compute threads read for themselves.
    if (s_.pipeline == PipelineMode::kNone) {
      return {.compute_threads = s_.threads,
              .io_core_class = "",
              .io_issuers = s_.threads,
              .uses_npu = s_.npu};
    }
    return {.compute_threads = s_.threads,
            .io_core_class = "big",
            .io_issuers = 1,
            .uses_npu = s_.npu};  // one I/O thread on a big core [v3]
  }
  MemoryPlan memory() const override {
    return {.resident_bytes = resident_,
            .cache_bytes = s_.cache.capacity_bytes,
            .read_buffer_bytes = s_.attention_reads.buffer_bytes()};
  }
  CacheCounters counters() const override {
    if (ctx_.sharing.replay != nullptr) return replayed_;
    return {cache_->hits(), cache_->accesses()};
  }

  // At prefill nearly every neuron is active, so a layer is one dense cluster:
  // unless the whole FFN is in memory, the layer's FFN is read whole from flash,
  // sequentially, one layer ahead of the NPU (v3 section 4.1).
  NodeId PlanPrefill(int tokens, WorkPlan* plan) override {
    const bool in_memory = s_.cache.capacity_bytes >= ctx_.bytes.cacheable_ffn_bytes();
    const LayerReads reads{.bytes_per_layer = (in_memory ? 0 : costs_.layer_ffn_flash_bytes) +
                                              s_.attention_reads.bytes_per_layer,
                           .request_bytes = 512 * 1024,
                           .lookahead_layers = 1};
    return PlanDensePrefill(costs_, tokens, s_.npu ? ComputeUnit::kNpu : ComputeUnit::kCpu,
                            s_.threads, reads, plan);
  }

  NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) override {
    return PlanLayers(
        costs_, position, s_.threads, ComputeUnit::kCpu, plan,
        [&](int l, NodeId attention) { return PlanFfn(token.layers[l], attention, plan); }, kNoNode,
        s_.attention_reads);
  }

  void EndToken() override {
    if (ctx_.sharing.replay == nullptr) cache_->OnTokenEnd();
  }

 private:
  NodeId PlanFfn(const LayerActivations& layer, NodeId after, WorkPlan* plan) {
    const ModelSpec& m = ctx_.model;
    const int64_t per_expert_predictor = costs_.predictor_bytes / m.experts;
    NodeId predicted = plan->Parallel(ComputeKind::kPredictor, ComputeUnit::kCpu,
                                      per_expert_predictor * int64_t(layer.experts.size()), 0,
                                      s_.threads, {after});
    FfnPlanOptions o;
    o.pipeline = s_.pipeline;
    o.cluster_neurons = s_.cluster_neurons;
    o.reads = reads_;
    // A gate-threshold model's gate rows ran with the predictor.
    o.gate_row_bytes = m.gate_threshold ? 0 : ctx_.bytes.matrix_row_bytes;
    o.bundle_bytes = ctx_.bytes.sparse_neuron_bytes;
    o.io_depth = s_.io_depth;
    o.range_bytes = int64_t{m.d_ffn} * m.experts * ctx_.bytes.bundle_flash_bytes;
    std::vector<NodeId> ends;
    for (const NeuronSet& set : layer.experts) {
      const int slot = static_cast<int>(layer.layer) * m.experts + static_cast<int>(set.expert);
      const FfnCounts counts = Classify(layer.layer, slot, set);
      ends.push_back(PlanSparseFfn(counts, o, predicted, plan));
      if (s_.npu && npu_per_slot_[slot] > 0) {
        ComputeTask dense{.kind = ComputeKind::kFfn,
                          .unit = ComputeUnit::kNpu,
                          .bytes = npu_per_slot_[slot] * ctx_.bytes.sparse_neuron_bytes};
        ends.push_back(plan->Compute(dense, {predicted}));
      }
    }
    NodeId end = plan->Join(ends);
    plan->Depend(end, predicted);
    return end;
  }

  // The set's predicted neurons classified by where they are, the cache
  // updated; or, replaying another run's classification, that run's counts.
  SF_POPCNT_CLONES FfnCounts Classify(uint32_t layer, int slot, const NeuronSet& set) {
    ClassifiedSet c;
    if (ctx_.sharing.replay != nullptr) {
      ctx_.sharing.replay->Next(layer, set.expert, &c);
      replayed_ = c.after;
      return c.counts;
    }
    const uint32_t base = indexer_.Key(layer, set.expert, 0);
    const std::vector<uint32_t>& predicted_ids = predictor_.Predict(slot, set);
    uint64_t hot_hits = 0;
    c.counts = ClassifyWithPinned(
        predicted_ids, set, base, reads_.second_conditional,
        {.resident = &cache_->hot_bits(), .elsewhere = s_.npu ? &npu_row_ : nullptr},
        [&](CacheKey k) { return LookupCold(k); }, [&](CacheKey k) { cache_->Fetched(k); },
        [&](CacheKey k) { cache_->Prefetch(k); }, cache_->uses_hints(), &hot_hits);
    cache_->CountHotHits(hot_hits);
    if (ctx_.sharing.record != nullptr) {
      c.after = {cache_->hits(), cache_->accesses()};
      ctx_.sharing.record->Append(layer, set.expert, c);
    }
    return c.counts;
  }

  // A key outside the hot region; the NPU's rows are all hot (PlanNpuRows), so
  // the CPU computes every cold neuron.
  Residency LookupCold(CacheKey k) {
    return cache_->LookupCold(k) ? Residency::kResident : Residency::kMissing;
  }

  // PowerInfer-2's offline planner: the NPU computes a slot's hottest pinned rows
  // densely while the CPU computes the slot's other active rows sparsely, in
  // parallel, so it takes as many as balance the two: the smallest h with
  // h >= (NPU rate / CPU rate) x (expected active rows outside the top h). Rows
  // of the hot region beyond h stay pinned but are computed sparsely on the CPU,
  // so a larger cache never adds dense NPU work past the balance point.
  void PlanNpuRows() {
    const ModelSpec& m = ctx_.model;
    const ActivationProfile& profile = *ctx_.profile;
    const double tokens = static_cast<double>(std::max<uint64_t>(1, profile.tokens()));
    // Per token the slot runs with this probability (an expert's routing share).
    const double runs = m.experts > 1 ? static_cast<double>(m.top_k) / m.experts : 1.0;
    // Expected active rows per run of a slot, from the profile's counts of its rows.
    auto expected = [&](uint64_t count) { return static_cast<double>(count) / tokens / runs; };
    const int slots = m.layers * m.experts;
    const CacheKey d_ffn = static_cast<CacheKey>(m.d_ffn);
    npu_row_.assign((static_cast<size_t>(indexer_.key_space()) + 63) / 64, 0);
    npu_per_slot_.assign(slots, 0);
    const std::vector<CacheKey> hot = HotKeysBySlot(slots);
    size_t at = 0;  // the slot's first key in `hot`
    for (int slot = 0; slot < slots; ++slot) {
      const CacheKey base = static_cast<CacheKey>(slot) * d_ffn;
      uint64_t rest = 0;  // the profile's count of the slot's rows outside the top h
      for (CacheKey k = base; k < base + d_ffn; ++k) rest += profile.count(k);
      size_t h = 0;
      for (; at + h < hot.size() && hot[at + h] < base + d_ffn; ++h) {
        if (static_cast<double>(h) >= ctx_.npu_cpu_rate_ratio * expected(rest)) break;
        const CacheKey k = hot[at + h];
        rest -= profile.count(k);
        npu_row_[k >> 6] |= uint64_t{1} << (k & 63);
      }
      npu_per_slot_[slot] = static_cast<int64_t>(h);
      while (at < hot.size() && hot[at] < base + d_ffn) ++at;
    }
  }

  // The hot region's keys grouped by slot, slot by slot, each slot's hottest
  // first (ties: lower key first): the profile's rank order, kept per slot, so
  // no slot is sorted again. The hot region is a prefix of that order, so only
  // the prefix is walked.
  std::vector<CacheKey> HotKeysBySlot(int slots) const {
    const std::vector<CacheKey>& ranked = ctx_.profile->Ranked();
    size_t hot_keys = 0;
    for (uint64_t word : cache_->hot_bits()) hot_keys += std::popcount(word);
    std::vector<size_t> next(static_cast<size_t>(slots) + 1, 0);
    size_t prefix = 0;  // ranked[0, prefix) holds every hot key
    for (size_t seen = 0; seen < hot_keys && prefix < ranked.size(); ++prefix) {
      const CacheKey k = ranked[prefix];
      if (cache_->hot(k)) {
        ++next[indexer_.Slot(k) + 1];
        ++seen;
      }
    }
    for (int s = 0; s < slots; ++s) next[s + 1] += next[s];
    std::vector<CacheKey> hot(next[slots]);
    for (size_t i = 0; i < prefix; ++i) {
      const CacheKey k = ranked[i];
      if (cache_->hot(k)) hot[next[indexer_.Slot(k)]++] = k;
    }
    return hot;
  }

  StrategyContext ctx_;
  Settings s_;
  NeuronReads reads_;
  std::unique_ptr<SegmentedCache> cache_;
  int64_t resident_;
  LayerCosts costs_;
  NeuronIndexer indexer_;
  Predictor predictor_;
  CacheCounters replayed_;  // the cache's counters as the replayed classification left them
  std::vector<int64_t> npu_per_slot_;  // rows the NPU computes densely, per slot
  std::vector<uint64_t> npu_row_;      // bit per key: computed by the NPU (a hot key)
};

}  // namespace

absl::StatusOr<std::unique_ptr<Strategy>> MakePowerInfer2(StrategyOptions& opt,
                                                          const StrategyContext& ctx) {
  const ModelSpec& m = ctx.model;
  const ModelBytes& b = ctx.bytes;
  Settings s;
  s.threads = ReadThreads(opt, ctx, std::min(4, ctx.cpu_cores - 1));  // [v3 Fig. 6]
  const bool split = b.bundle_flash_bytes == 8192;
  s.layout = opt.Parsed("layout", split ? "split-bundle" : "bundle", ParseLayout);
  s.pipeline = opt.Parsed("pipeline", "cluster", ParsePipeline);
  s.cache.warm = opt.Parsed("warm", "rank", ParseWarmOrder);
  s.cluster_neurons = opt.Int("cluster_neurons", 128, 1, 1 << 24);
  s.io_depth = opt.Int("io_depth", 32, 1, 4096);
  s.npu = opt.Bool("npu", ctx.npu_present);
  s.cache.hot_share = opt.Double("hot_share", 0.5, 0, 1);
  s.cache.cold_policy = ReadPolicy(opt, ctx, "lru");
  s.predictor = ReadPredictorOptions(opt, ctx);
  s.attention_reads = ReadAttentionPlacement(opt, m, b);
  if (absl::Status st = opt.Check("powerinfer2"); !st.ok()) return st;
  if (s.npu && !ctx.npu_present) {
    return absl::InvalidArgumentError("powerinfer2: npu=true but the device has no NPU");
  }
  absl::StatusOr<NeuronReads> reads = PlanNeuronReads(m, b, s.layout);
  if (!reads.ok()) return reads.status();
  const int64_t resident =
      ResidentWithAttention(b.resident_bytes(ctx.context_tokens()), s.attention_reads, b);
  absl::StatusOr<int64_t> budget = NeuronCacheBudget(
      ctx.memory_bytes, ctx.ffn_resident, resident, b,
      s.attention_reads.bytes_per_layer > 0
          ? "embeddings, two layers of attention, KV cache, predictors, scales and runtime buffers"
          : "non-FFN weights, KV cache, predictors, scales and runtime buffers");
  if (!budget.ok()) return budget.status();
  NeuronIndexer indexer(m.layers, m.experts, m.d_ffn);
  s.cache.key_space = indexer.key_space();
  s.cache.capacity_bytes = *budget;
  s.cache.neuron_bytes = b.sparse_neuron_bytes;
  s.cache.oracle = ctx.oracle;
  absl::StatusOr<std::unique_ptr<SegmentedCache>> cache =
      SegmentedCache::Create(s.cache, ctx.profile->Ranked());
  if (!cache.ok()) return cache.status();
  return std::unique_ptr<Strategy>(new PowerInfer2(ctx, s, *reads, *std::move(cache), resident));
}

}  // namespace sparseflash
