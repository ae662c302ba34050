#include "engine/neuron_cache.h"

#include "absl/strings/str_cat.h"

namespace sparseflash {

NeuronCache::NeuronCache(NeuronCacheOptions options, std::unique_ptr<EvictionPolicy> policy,
                         std::unique_ptr<AdmissionPolicy> admission)
    : options_(std::move(options)),
      policy_(std::move(policy)),
      admission_(std::move(admission)),
      present_((options_.key_space + 63) / 64, 0) {
  lru_ = dynamic_cast<LruPolicy*>(policy_.get());
  admits_misses_ = policy_->admits_misses();
  asks_for_victims_ = policy_->may_withhold_victims();
}

absl::StatusOr<std::unique_ptr<NeuronCache>> NeuronCache::Create(
    const NeuronCacheOptions& options, std::unique_ptr<AdmissionPolicy> admission) {
  if (options.capacity_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("neuron cache capacity ", options.capacity_bytes, " bytes is negative"));
  }
  if (options.entry_bytes > UINT32_MAX) {
    return absl::InvalidArgumentError("neuron cache entries must be below 4 GiB");
  }
  if (options.key_space == 0) {
    return absl::InvalidArgumentError("neuron cache needs key_space > 0 (dense neuron keys)");
  }
  if (options.key_space > kMaxKeySpace) {
    return absl::InvalidArgumentError(absl::StrCat("neuron cache key space ", options.key_space,
                                                   " is above the most keys, ", kMaxKeySpace));
  }
  PolicyOptions p;
  p.key_space = options.key_space;
  p.capacity_entries = options.capacity_bytes / std::max<int64_t>(1, options.entry_bytes);
  p.capacity_bytes = options.capacity_bytes;
  p.entry_bytes = std::max<int64_t>(1, options.entry_bytes);
  p.window_tokens = options.window_tokens;
  p.key_weight = options.key_weight;
  p.oracle = options.oracle;
  absl::StatusOr<std::unique_ptr<EvictionPolicy>> policy = MakeEvictionPolicy(options.policy, p);
  if (!policy.ok()) return policy.status();
  return std::unique_ptr<NeuronCache>(
      new NeuronCache(options, *std::move(policy), std::move(admission)));
}

void NeuronCache::Insert(CacheKey key, int64_t bytes) {
  if (!Contains(key)) InsertAbsent(key, bytes);
}

void NeuronCache::InsertAbsent(CacheKey key, int64_t bytes) {
  if (bytes <= 0 || bytes > UINT32_MAX || bytes > options_.capacity_bytes || !admits_misses_ ||
      (admission_ && !admission_->Admit(key, bytes))) {
    ++stats_.rejected;
    return;
  }
  Admit(key, bytes);
}

bool NeuronCache::Preload(CacheKey key, int64_t bytes) {
  if (Contains(key)) return true;
  if (bytes <= 0 || bytes > UINT32_MAX || used_ + bytes > options_.capacity_bytes) return false;
  Store(key, static_cast<uint32_t>(bytes));
  ++entries_;
  used_ += bytes;
  policy_->OnInsert(key);
  return true;
}

void NeuronCache::OnTokenEnd() {
  policy_->OnTokenEnd();
  CacheKey key;
  while (policy_->Expire(&key)) {
    Drop(key);
    ++stats_.expirations;
  }
}

void NeuronCache::Drop(CacheKey key) {
  used_ -= SizeOf(key);
  if (!sizes_.empty()) sizes_[key] = 0;
  Mark(key, false);
  --entries_;
  if (drop_listener_) drop_listener_(key);
}

void NeuronCache::Admit(CacheKey key, int64_t bytes) {
  while (used_ + bytes > options_.capacity_bytes) {
    if (asks_for_victims_ && !policy_->HasVictim()) {
      ++stats_.rejected;
      return;
    }
    Drop(lru_ != nullptr ? lru_->LruPolicy::Evict() : policy_->Evict());  // LRU devirtualized
    ++stats_.evictions;
  }
  Store(key, static_cast<uint32_t>(bytes));
  ++entries_;
  used_ += bytes;
  if (lru_ != nullptr) {
    lru_->LruPolicy::OnInsert(key);
  } else {
    policy_->OnInsert(key);
  }
  ++stats_.insertions;
}

void NeuronCache::Store(CacheKey key, uint32_t bytes) {
  if (sizes_.empty()) {
    if (uniform_bytes_ == 0 || entries_ == 0) uniform_bytes_ = bytes;
    if (bytes != uniform_bytes_) {
      // A second size: every present key so far has the uniform one.
      sizes_.assign(options_.key_space, 0);
      for (size_t w = 0; w < present_.size(); ++w) {
        for (uint64_t bits = present_[w]; bits != 0; bits &= bits - 1) {
          sizes_[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))] = uniform_bytes_;
        }
      }
    }
  }
  if (!sizes_.empty()) sizes_[key] = bytes;
  Mark(key, true);
}

}  // namespace sparseflash
