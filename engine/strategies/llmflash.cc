// llmflash: LLM in a Flash (reference/techniques.md section 2). Embeddings,
// attention, KV cache and predictors resident; the neurons predicted for the
// last k tokens kept in DRAM (sliding window); only neurons new to the window
// read, as row-column bundles, by 32 parallel readers; compute after the reads
// (no pipeline); DRAM preallocated per layer (section 2.7) in proportion to
// the layer's share of predicted neurons in the offline profile, so each
// layer's window competes only with itself; memory management (deleting rows by moving the last row
// in, appending new rows) charged at the device's DRAM rewrite rate. With predictor=false it is the
// paper's naive (hybrid_share=0) or hybrid baseline: the non-resident part of every layer read
// sequentially for every token.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "engine/classification_tape.h"
#include "engine/layer_costs.h"
#include "engine/neuron_cache.h"
#include "engine/predictor.h"
#include "engine/sparse_ffn.h"
#include "engine/strategies/strategies.h"

namespace sparseflash {
namespace {

struct Settings {
  int threads;
  bool predictor_on;
  int window;
  LayoutKind layout;
  int io_threads;
  bool memory_management;
  double hybrid_share;
  PredictorOptions predictor;
  LayerReads attention_reads;  // attention streamed from flash; none = resident
};

class LlmFlash : public Strategy {
 public:
  LlmFlash(const StrategyContext& ctx, const Settings& s, NeuronReads reads,
           std::vector<std::unique_ptr<NeuronCache>> caches, MemoryPlan memory)
      : ctx_(ctx),
        s_(s),
        reads_(reads),
        caches_(std::move(caches)),
        memory_(memory),
        costs_(ComputeLayerCosts(ctx.model, ctx.bytes)),
        predictor_(s.predictor, ctx.trace.has_predicted, ctx.model.layers * ctx.model.experts,
                   ctx.model.d_ffn),
        replayed_(CacheStats()) {}

  ResourcePlan resources() const override {
    return {.compute_threads = s_.threads,
            .io_core_class = "",
            .io_issuers = std::min(s_.io_threads, ctx_.cpu_cores),
            .uses_npu = false};
  }
  MemoryPlan memory() const override { return memory_; }
  CacheCounters counters() const override {
    return ctx_.sharing.replay != nullptr ? replayed_ : CacheStats();
  }

  NodeId PlanPrefill(int tokens, WorkPlan* plan) override {
    // The FFN's share in memory: the cache and what the predictor holds of it.
    const ModelBytes& b = ctx_.bytes;
    const double resident =
        std::min(1.0, double(memory_.cache_bytes + b.ffn_in_predictor_bytes) / double(b.ffn_bytes));
    const LayerReads reads{
        .bytes_per_layer = static_cast<int64_t>((1 - resident) * costs_.layer_ffn_bytes) +
                           s_.attention_reads.bytes_per_layer,
        .request_bytes = 1 << 20,
        .lookahead_layers = 1};
    return PlanDensePrefill(costs_, tokens, ComputeUnit::kCpu, s_.threads, reads, plan);
  }

  NodeId PlanToken(const TokenActivations& token, int position, WorkPlan* plan) override {
    if (!s_.predictor_on) return PlanStreaming(position, plan);
    // The token's input embedding row, read from flash when it is not resident.
    const NodeId row =
        ctx_.bytes.untied_input_embedding_bytes > 0
            ? plan->Read({.request_bytes = AlignUp(ctx_.bytes.matrix_row_bytes, 4096), .count = 1})
            : kNoNode;
    return PlanLayers(
        costs_, position, s_.threads, ComputeUnit::kCpu, plan,
        [&](int l, NodeId attention) { return PlanFfn(token.layers[l], attention, plan); }, row,
        s_.attention_reads);
  }

  void EndToken() override {
    if (ctx_.sharing.replay != nullptr) return;  // the caches are not used
    for (auto& cache : caches_) cache->OnTokenEnd();
  }

 private:
  // Naive / hybrid: every layer's non-resident weights read sequentially, then
  // dense compute; the next layer's read waits for this layer (no overlap).
  NodeId PlanStreaming(int position, WorkPlan* plan) {
    const double missing = 1 - s_.hybrid_share;
    NodeId prev = kNoNode;
    for (int l = 0; l < costs_.layers; ++l) {
      const NodeId first = static_cast<NodeId>(plan->size());
      const int64_t layer_bytes = costs_.attention_bytes + costs_.layer_ffn_bytes;
      NodeId read = StreamRead(static_cast<int64_t>(missing * layer_bytes), prev, plan);
      NodeId attention = plan->Parallel(ComputeKind::kAttention, ComputeUnit::kCpu,
                                        costs_.AttentionBytes(position), 0, s_.threads, {read});
      prev = plan->Parallel(ComputeKind::kFfn, ComputeUnit::kCpu, costs_.dense_ffn_bytes, 0,
                            s_.threads, {attention});
      plan->StampLayer(first, l);
    }
    NodeId head = StreamRead(static_cast<int64_t>(missing * costs_.head_bytes), prev, plan);
    return plan->Parallel(ComputeKind::kOther, ComputeUnit::kCpu, costs_.head_bytes, 0, s_.threads,
                          {head});
  }

  NodeId StreamRead(int64_t bytes, NodeId after, WorkPlan* plan) {
    if (bytes <= 0) return plan->Join({after});
    const int64_t request = 1 << 20;
    FlashRead r{.request_bytes = request,
                .count = static_cast<int32_t>((bytes + request - 1) / request),
                .max_in_flight = s_.io_threads,
                .sequential = true};
    return plan->Read(r, {after});
  }

  NodeId PlanFfn(const LayerActivations& layer, NodeId after, WorkPlan* plan) {
    const ModelSpec& m = ctx_.model;
    NodeId predicted = plan->Parallel(
        ComputeKind::kPredictor, ComputeUnit::kCpu,
        costs_.predictor_bytes / m.experts * int64_t(layer.experts.size()), 0, s_.threads, {after});
    FfnPlanOptions o;
    o.pipeline = PipelineMode::kNone;
    o.cluster_neurons = 1 << 30;  // one batch of reads, one compute per layer
    o.reads = reads_;
    // A gate-threshold model's gate rows ran with the predictor.
    o.gate_row_bytes = m.gate_threshold ? 0 : ctx_.bytes.matrix_row_bytes;
    o.bundle_bytes = ctx_.bytes.sparse_neuron_bytes;
    o.io_depth = s_.io_threads;
    o.range_bytes = int64_t{m.d_ffn} * m.experts * ctx_.bytes.bundle_flash_bytes;
    std::vector<NodeId> ends;
    int64_t fetched = 0;
    for (const NeuronSet& set : layer.experts) {
      const ClassifiedSet c = Classify(layer.layer, set);
      fetched += c.fetched;
      ends.push_back(PlanSparseFfn(c.counts, o, predicted, plan));
    }
    NodeId end = plan->Join(ends);
    plan->Depend(end, predicted);
    if (!s_.memory_management || fetched == 0) return end;
    // Rows rewritten: as many deleted (last row moved in) as appended, charged
    // per row at the DRAM rewrite rate (techniques.md 2.7).
    ComputeTask manage{.kind = ComputeKind::kMemoryManagement,
                       .unit = ComputeUnit::kCpu,
                       .bytes = fetched * ctx_.bytes.sparse_neuron_bytes};
    return plan->Compute(manage, {end});
  }

  // The layer caches' hits and accesses so far.
  CacheCounters CacheStats() const {
    CacheCounters c;
    for (const auto& cache : caches_) {
      c.hits += cache->stats().hits;
      c.accesses += cache->stats().hits + cache->stats().misses;
    }
    return c;
  }

  // The set's predicted neurons classified by where they are, the layer's
  // cache updated; or, replaying another run's classification, that run's.
  SF_POPCNT_CLONES ClassifiedSet Classify(uint32_t layer, const NeuronSet& set) {
    ClassifiedSet c;
    if (ctx_.sharing.replay != nullptr) {
      ctx_.sharing.replay->Next(layer, set.expert, &c);
      replayed_ = c.after;
      return c;
    }
    const ModelSpec& m = ctx_.model;
    const int slot = static_cast<int>(layer) * m.experts + static_cast<int>(set.expert);
    NeuronCache& cache = *caches_[layer];
    const uint32_t base = set.expert * m.d_ffn;  // keys are per layer
    uint64_t no_pinned_hits = 0;                 // the window's cache pins nothing
    c.counts = ClassifyWithPinned(
        predictor_.Predict(slot, set), set, base, reads_.second_conditional, PinnedKeys{},
        [&](CacheKey k) { return cache.Lookup(k) ? Residency::kResident : Residency::kMissing; },
        [&](CacheKey k) {
          cache.Insert(k, ctx_.bytes.sparse_neuron_bytes);
          ++c.fetched;
        },
        [&](CacheKey k) { cache.Prefetch(k); }, cache.uses_hints(), &no_pinned_hits);
    if (ctx_.sharing.record != nullptr) {
      c.after = CacheStats();
      ctx_.sharing.record->Append(layer, set.expert, c);
    }
    return c;
  }

  StrategyContext ctx_;
  Settings s_;
  NeuronReads reads_;
  std::vector<std::unique_ptr<NeuronCache>> caches_;  // one per layer
  MemoryPlan memory_;
  LayerCosts costs_;
  Predictor predictor_;
  CacheCounters replayed_;  // the caches' counters as the replayed classification left them
};

// Each layer's share of the profile's accesses (equal shares without data).
std::vector<double> LayerShares(const ActivationProfile& profile, const ModelSpec& m) {
  const int64_t per_layer = m.neurons_per_layer();
  std::vector<double> share(m.layers, 0);
  double total = 0;
  for (int l = 0; l < m.layers; ++l) {
    for (int64_t i = 0; i < per_layer; ++i) {
      share[l] += static_cast<double>(profile.count(static_cast<CacheKey>(l * per_layer + i)));
    }
    total += share[l];
  }
  for (double& s : share) s = total > 0 ? s / total : 1.0 / m.layers;
  return share;
}

// Loads the most used neurons (by `weight`) until the cache is full: what
// persists from the start, before the window claims its share.
void PreloadMostUsed(const std::vector<float>& weight, int64_t bundle_bytes, NeuronCache* cache) {
  std::vector<CacheKey> order(weight.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<CacheKey>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](CacheKey a, CacheKey b) { return weight[a] > weight[b]; });
  for (CacheKey k : order) {
    if (weight[k] <= 0 || !cache->Preload(k, bundle_bytes)) break;
  }
}

// Each layer's share of `total` bytes, at most `layer_bytes` (a whole layer),
// what a full layer cannot use going to the others by their shares.
std::vector<int64_t> LayerCapacities(const std::vector<double>& share, int64_t total,
                                     int64_t layer_bytes) {
  std::vector<int64_t> cap(share.size(), 0);
  std::vector<bool> full(share.size(), false);
  double left = static_cast<double>(total);
  for (bool changed = true; changed && left > 0;) {
    changed = false;
    double open_share = 0;
    for (size_t l = 0; l < share.size(); ++l) open_share += full[l] ? 0 : share[l];
    if (open_share <= 0) break;
    const double budget = left;
    for (size_t l = 0; l < share.size(); ++l) {
      if (full[l]) continue;
      const double want = budget * share[l] / open_share;
      const double room = static_cast<double>(layer_bytes - cap[l]);
      const double give = std::min(want, room);
      cap[l] += static_cast<int64_t>(give);
      left -= give;
      if (give >= room) full[l] = changed = true;
    }
  }
  return cap;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Strategy>> MakeLlmFlash(StrategyOptions& opt,
                                                       const StrategyContext& ctx) {
  const ModelSpec& m = ctx.model;
  const ModelBytes& b = ctx.bytes;
  Settings s;
  s.threads = ReadThreads(opt, ctx, std::min(8, ctx.cpu_cores));
  s.predictor_on = opt.Bool("predictor", true);
  s.window = opt.Int("window", 4, 0, 1024);           // [LF] k = 4 (OPT, Falcon)
  const bool bundling = opt.Bool("bundling", true);   // [LF] row-column bundling
  s.io_threads = opt.Int("io_threads", 32, 1, 4096);  // [LF]
  s.memory_management = opt.Bool("memory_management", true);
  s.hybrid_share = opt.Double("hybrid_share", 0.5, 0, 1);  // [LF] naive = 0, hybrid = 0.5
  s.predictor = ReadPredictorOptions(opt, ctx);
  const std::string policy = ReadPolicy(opt, ctx, "window");
  s.attention_reads = ReadAttentionPlacement(opt, m, b);
  if (absl::Status st = opt.Check("llmflash"); !st.ok()) return st;
  if (!s.predictor_on && s.attention_reads.bytes_per_layer > 0) {
    return absl::InvalidArgumentError(
        "llmflash: attention=flash needs predictor=true (without the predictor, hybrid_share "
        "decides which weights are read)");
  }
  s.layout = bundling ? LayoutKind::kBundle : LayoutKind::kMatrix;
  absl::StatusOr<NeuronReads> reads = PlanNeuronReads(m, b, s.layout);
  if (!reads.ok()) return reads.status();
  if (!s.predictor_on) {
    // No sparsity: the hybrid share of the model is resident, the rest streamed.
    MemoryPlan memory{.resident_bytes = static_cast<int64_t>(s.hybrid_share * b.model_bytes()) +
                                        b.kv_bytes(ctx.context_tokens()) + b.runtime_bytes};
    return std::unique_ptr<Strategy>(new LlmFlash(ctx, s, *reads, {}, memory));
  }
  // The LM head stays; an untied input embedding is read one row per token
  // (what lets Persimmon-8B run at half its size).
  const int64_t resident =
      ResidentWithAttention(b.resident_bytes(ctx.context_tokens()) - b.untied_input_embedding_bytes,
                            s.attention_reads, b);
  absl::StatusOr<int64_t> budget = NeuronCacheBudget(
      ctx.memory_bytes, ctx.ffn_resident, resident, b,
      s.attention_reads.bytes_per_layer > 0
          ? "LM head, two layers of attention, KV cache, predictors and runtime buffers"
          : "LM head, attention, KV cache, predictors and runtime buffers");
  if (!budget.ok()) return budget.status();
  NeuronCacheOptions co;
  co.key_space = static_cast<uint32_t>(m.neurons_per_layer());
  const int64_t total = *budget;
  co.policy = policy;
  co.entry_bytes = b.sparse_neuron_bytes;
  co.window_tokens = s.window;
  co.oracle = ctx.oracle;
  if (co.oracle != nullptr) {
    return absl::InvalidArgumentError(
        "llmflash keeps one cache per layer; policy belady is "
        "available for powerinfer2 and llamacpp");
  }
  const int64_t per_layer = m.neurons_per_layer();
  const std::vector<int64_t> capacity =
      LayerCapacities(LayerShares(*ctx.profile, m), total, per_layer * b.sparse_neuron_bytes);
  std::vector<std::unique_ptr<NeuronCache>> caches;
  int64_t allocated = 0;
  for (int l = 0; l < m.layers; ++l) {
    co.capacity_bytes = capacity[l];
    allocated += co.capacity_bytes;
    // Selective persistence keeps a layer's most used neurons beyond its window.
    co.key_weight.resize(per_layer);
    for (int64_t i = 0; i < per_layer; ++i) {
      co.key_weight[i] =
          static_cast<float>(ctx.profile->count(static_cast<CacheKey>(l * per_layer + i)));
    }
    absl::StatusOr<std::unique_ptr<NeuronCache>> cache = NeuronCache::Create(co);
    if (!cache.ok()) return cache.status();
    PreloadMostUsed(co.key_weight, b.sparse_neuron_bytes, cache->get());
    caches.push_back(*std::move(cache));
  }
  return std::unique_ptr<Strategy>(
      new LlmFlash(ctx, s, *reads, std::move(caches),
                   {.resident_bytes = resident,
                    .cache_bytes = allocated,
                    .read_buffer_bytes = s.attention_reads.buffer_bytes()}));
}

}  // namespace sparseflash
