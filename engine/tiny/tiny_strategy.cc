#include "engine/tiny/tiny_strategy.h"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/atomic_file.h"
#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace sparseflash {
namespace {

uint8_t* AlignedAlloc(int64_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, std::max<int64_t>(bytes, 4096)) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

// The strategy's cache policy and whether it computes every neuron (dense).
struct Flavor {
  const char* name;
  const char* policy;
  bool dense;
};
constexpr Flavor kFlavors[] = {
    {"powerinfer2", "lru", false},
    {"llmflash", "window", false},
    {"llamacpp", "lru", true},
    {"in_memory", "lru", false},
};

}  // namespace

absl::Status WriteTinyFlashFile(const TinyModel& model, const std::string& path) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  std::vector<uint8_t> page(model.bundle_stride());
  for (int l = 0; l < model.config().layers; ++l) {
    for (int n = 0; n < model.config().hidden; ++n) {
      std::fill(page.begin(), page.end(), 0);
      model.WriteBundle(l, n, page.data());
      absl::Status s = (*file)->Write({reinterpret_cast<const char*>(page.data()), page.size()});
      if (!s.ok()) return s;
    }
  }
  return (*file)->Commit();
}

TinyStrategy::TinyStrategy(const TinyModel& model, std::vector<int> prompt,
                           const TinyStrategyOptions& o)
    : model_(model), prompt_(std::move(prompt)), o_(o), fwd_(model) {}

TinyStrategy::~TinyStrategy() {
  std::free(arena_);
  std::free(staging_);
}

absl::StatusOr<std::unique_ptr<TinyStrategy>> TinyStrategy::Create(const TinyModel& model,
                                                                   std::vector<int> prompt,
                                                                   const TinyStrategyOptions& o) {
  const Flavor* flavor = nullptr;
  for (const Flavor& f : kFlavors) {
    if (o.strategy == f.name) flavor = &f;
  }
  if (flavor == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "unknown strategy '", o.strategy, "'; known: powerinfer2, llmflash, llamacpp, in_memory"));
  }
  if (prompt.empty()) return absl::InvalidArgumentError("the prompt needs at least BOS");
  const TinyConfig& c = model.config();
  const int64_t bundle = model.bundle_bytes();
  const int64_t neurons = int64_t{c.layers} * c.hidden;
  // Resident: every weight of the file but the up and down matrices (int8 with
  // a float scale per group), the int8 KV cache, staging.
  const int64_t up_down_file_bytes = neurons * 2 * (c.dim + int64_t{4} * c.dim / c.group);
  const int64_t resident = model.file_bytes() - up_down_file_bytes +
                           int64_t{2} * c.layers * c.seq_len * c.dim +
                           int64_t{c.hidden} * model.bundle_stride();
  int64_t cache_bytes = 0;
  if (o.strategy == "in_memory") {
    cache_bytes = neurons * bundle;
    if (o.memory_bytes >= 0 && o.memory_bytes < resident + cache_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("in_memory needs ", FormatBytes(resident + cache_bytes), "; --memory is ",
                       FormatBytes(o.memory_bytes)));
    }
  } else if (o.ffn_resident >= 0) {
    if (o.ffn_resident > 1) return absl::InvalidArgumentError("--ffn-resident is above 1");
    cache_bytes = static_cast<int64_t>(o.ffn_resident * neurons) * bundle;
  } else {
    if (o.memory_bytes < resident) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory budget ", FormatBytes(o.memory_bytes), " is below the resident set of ",
          FormatBytes(resident), " (non-FFN weights, gate, KV cache, staging)"));
    }
    cache_bytes = std::min(o.memory_bytes - resident, neurons * bundle);
  }
  auto s = std::unique_ptr<TinyStrategy>(new TinyStrategy(model, std::move(prompt), o));
  s->dense_ = flavor->dense;
  s->memory_ = {resident, cache_bytes};
  if (absl::Status st = s->Init(cache_bytes, o.policy.empty() ? flavor->policy : o.policy);
      !st.ok()) {
    return st;
  }
  return s;
}

absl::Status TinyStrategy::Init(int64_t cache_bytes, const std::string& policy) {
  const TinyConfig& c = model_.config();
  const int64_t bundle = model_.bundle_bytes();
  const uint32_t neurons = c.layers * c.hidden;
  slots_ = cache_bytes / bundle;
  arena_ = AlignedAlloc(slots_ * bundle);
  staging_ = AlignedAlloc(int64_t{c.hidden} * model_.bundle_stride());
  if (arena_ == nullptr || staging_ == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate the neuron cache arena");
  }
  slot_of_key_.assign(neurons, -1);
  for (int64_t i = slots_ - 1; i >= 0; --i) free_slots_.push_back(static_cast<int32_t>(i));
  NeuronCacheOptions co{.key_space = neurons,
                        .capacity_bytes = slots_ * bundle,
                        .policy = policy,
                        .entry_bytes = bundle};
  absl::StatusOr<std::unique_ptr<NeuronCache>> cache = NeuronCache::Create(co);
  if (!cache.ok()) return cache.status();
  cache_ = *std::move(cache);
  cache_->set_drop_listener([this](CacheKey key) {
    free_slots_.push_back(slot_of_key_[key]);
    slot_of_key_[key] = -1;
  });
  if (o_.strategy == "in_memory") {  // loaded once from the model file, never read again
    for (CacheKey k = 0; k < neurons; ++k) {
      cache_->Preload(k, bundle);
      slot_of_key_[k] = free_slots_.back();
      free_slots_.pop_back();
      model_.WriteBundle(k / c.hidden, k % c.hidden, arena_ + slot_of_key_[k] * bundle);
    }
  }
  return absl::OkStatus();
}

CacheCounters TinyStrategy::counters() const {
  return {cache_->stats().hits, cache_->stats().hits + cache_->stats().misses};
}

NodeId TinyStrategy::PlanToken(const TokenActivations&, int position, WorkPlan* plan) {
  pos_ = position;
  token_ = position < static_cast<int>(prompt_.size()) ? prompt_[position] : next_;
  out_.tokens.resize(position + 1);
  out_.tokens[position] = token_;
  out_.active.emplace_back(model_.config().layers);
  end_ = plan->Join({});
  layer_ = 0;
  plan->Depend(end_, PlanAttention(0, plan));
  return end_;
}

NodeId TinyStrategy::PlanAttention(int layer, WorkPlan* plan) {
  auto work = std::make_shared<const std::function<void()>>([this, layer] {
    if (layer == 0) fwd_.Begin(token_, pos_);
    std::vector<uint32_t> gate = fwd_.AttentionAndGate(layer);
    if (dense_) {
      gate.resize(model_.config().hidden);
      for (int n = 0; n < model_.config().hidden; ++n) gate[n] = n;
    }
    needed_ = std::move(gate);
  });
  attention_ = plan->Compute({.kind = ComputeKind::kAttention, .work = work});
  return attention_;
}

void TinyStrategy::PlanFfn(int layer, WorkPlan* plan) {
  const int64_t bundle = model_.bundle_bytes();
  auto target = std::make_shared<ReadTarget>();
  target->buffer = staging_;
  missing_.clear();
  bundles_.assign(needed_.size(), nullptr);
  for (size_t k = 0; k < needed_.size(); ++k) {
    const CacheKey key = Key(layer, needed_[k]);
    if (cache_->Lookup(key)) {
      bundles_[k] = arena_ + int64_t{slot_of_key_[key]} * bundle;
    } else {
      bundles_[k] = staging_ + int64_t(missing_.size()) * model_.bundle_stride();
      target->offsets.push_back(int64_t{key} * model_.bundle_stride());
      missing_.push_back(key);
    }
  }
  NodeId read = kNoNode;
  if (!missing_.empty()) {
    read = plan->Read({.request_bytes = model_.bundle_stride(),
                       .count = static_cast<int32_t>(missing_.size()),
                       .max_in_flight = o_.io_depth,
                       .target = target});
  }
  auto work = std::make_shared<const std::function<void()>>(
      [this, layer] { out_.active[pos_][layer] = fwd_.FinishFfn(layer, needed_, bundles_); });
  ffn_ = plan->Compute({.kind = ComputeKind::kFfn, .work = work}, {read});
  plan->Depend(end_, ffn_);
}

void TinyStrategy::Admit(int layer) {
  const int64_t bundle = model_.bundle_bytes();
  for (size_t j = 0; j < missing_.size(); ++j) {
    const CacheKey key = missing_[j];
    cache_->Insert(key, bundle);
    if (!cache_->Contains(key) || slot_of_key_[key] >= 0) continue;
    slot_of_key_[key] = free_slots_.back();
    free_slots_.pop_back();
    std::memcpy(arena_ + int64_t{slot_of_key_[key]} * bundle, staging_ + j * model_.bundle_stride(),
                bundle);
  }
}

void TinyStrategy::OnNodeDone(NodeId id, WorkPlan* plan) {
  if (id == attention_) {
    attention_ = kNoNode;
    PlanFfn(layer_, plan);
    return;
  }
  if (id != ffn_) return;
  ffn_ = kNoNode;
  Admit(layer_);
  if (++layer_ < model_.config().layers) {
    plan->Depend(end_, PlanAttention(layer_, plan));
    return;
  }
  auto work = std::make_shared<const std::function<void()>>([this] {
    next_ = ArgMax(fwd_.Logits());
    if (pos_ + 1 < static_cast<int>(prompt_.size())) next_ = prompt_[pos_ + 1];
  });
  plan->Depend(end_, plan->Compute({.kind = ComputeKind::kOther, .work = work}));
}

void TinyStrategy::EndToken() {
  cache_->OnTokenEnd();
  out_.tokens.resize(pos_ + 2);
  out_.tokens[pos_ + 1] = next_;
}

}  // namespace sparseflash
