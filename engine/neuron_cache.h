// A byte-budgeted cache of FFN neuron bundles (or hot clusters): membership,
// sizes and the budget live here; which key to evict is the pluggable
// EvictionPolicy's choice; whether a missed key enters at all is the
// AdmissionPolicy's. Weights are read-only, so evictions are simply dropped.
// Not thread-safe: owned by the engine's single thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/eviction_policy.h"
#include "engine/policies/lru.h"

namespace sparseflash {

// Decides whether a missed key is cached. The default admits everything that fits.
class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;
  virtual bool Admit(CacheKey key, int64_t bytes) = 0;
};

// The most keys a cache takes (policies keep 32-bit positions of a few entries
// per key); a model has a few million neurons.
inline constexpr uint32_t kMaxKeySpace = uint32_t{1} << 29;

struct NeuronCacheOptions {
  uint32_t key_space = 0;                // keys are dense indices in [0, key_space)
  int64_t capacity_bytes = 0;            // budget of this cache (region), bytes
  std::string policy = "lru";            // eviction policy name
  int64_t entry_bytes = 0;               // typical entry size, sizes the policy's queues; 0 = 1
  int window_tokens = 4;                 // for "window"
  std::vector<float> key_weight;         // for "window": keep the heaviest keys beyond it
  const AccessOracle* oracle = nullptr;  // for "belady"
};

struct NeuronCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t insertions = 0;
  uint64_t evictions = 0;
  uint64_t rejected = 0;     // misses not admitted (admission or larger than the cache)
  uint64_t expirations = 0;  // keys that left a sliding window

  double hit_rate() const {
    return hits + misses ? static_cast<double>(hits) / (hits + misses) : 0;
  }
};

class NeuronCache {
 public:
  static absl::StatusOr<std::unique_ptr<NeuronCache>> Create(
      const NeuronCacheOptions& options, std::unique_ptr<AdmissionPolicy> admission = nullptr);

  // Looks `key` up; on a miss admits it (evicting as needed). Returns true on a hit.
  bool Access(CacheKey key, int64_t bytes) {
    if (Lookup(key)) return true;
    InsertAbsent(key, bytes);
    return false;
  }
  // Counts a hit or a miss; a hit refreshes the key in the policy.
  bool Lookup(CacheKey key) {
    if (Contains(key)) {
      ++stats_.hits;
      if (lru_ != nullptr) {
        lru_->LruPolicy::OnHit(key);  // devirtualized: the common case
      } else {
        policy_->OnHit(key);
      }
      return true;
    }
    ++stats_.misses;
    return false;
  }
  // Offers a missed key that has been read: cached if admission and the policy
  // allow and it fits the budget, evicting as needed.
  void Insert(CacheKey key, int64_t bytes);
  // Fills the cache before a run without counting a miss; false once full.
  bool Preload(CacheKey key, int64_t bytes);
  // Hints that `key` is looked up soon (keys arrive in sorted runs); worth
  // calling only when uses_hints().
  void Prefetch(CacheKey key) const { policy_->Prefetch(key); }
  bool uses_hints() const { return policy_->UsesHints(); }
  bool Contains(CacheKey key) const { return (present_[key >> 6] >> (key & 63)) & 1; }
  // Ages the policy and drops keys it expires (sliding window).
  void OnTokenEnd();
  // Called with every key that leaves (evicted or expired), e.g. to free the
  // memory holding its bytes.
  void set_drop_listener(std::function<void(CacheKey)> listener) {
    drop_listener_ = std::move(listener);
  }

  int64_t used_bytes() const { return used_; }
  int64_t capacity_bytes() const { return options_.capacity_bytes; }
  size_t entries() const { return entries_; }
  const NeuronCacheStats& stats() const { return stats_; }

 private:
  NeuronCache(NeuronCacheOptions options, std::unique_ptr<EvictionPolicy> policy,
              std::unique_ptr<AdmissionPolicy> admission);
  // Insert for a key known to be absent.
  void InsertAbsent(CacheKey key, int64_t bytes);
  void Admit(CacheKey key, int64_t bytes);
  void Drop(CacheKey key);
  // Records `bytes` as `key`'s size and marks it present.
  void Store(CacheKey key, uint32_t bytes);
  uint32_t SizeOf(CacheKey key) const { return sizes_.empty() ? uniform_bytes_ : sizes_[key]; }

  NeuronCacheOptions options_;
  std::unique_ptr<EvictionPolicy> policy_;
  LruPolicy* lru_ = nullptr;  // policy_ when it is LRU
  // The policy's constant answers, asked once: a miss makes no call for them.
  bool admits_misses_ = true;
  bool asks_for_victims_ = false;
  std::function<void(CacheKey)> drop_listener_;
  std::unique_ptr<AdmissionPolicy> admission_;
  void Mark(CacheKey key, bool on) {
    if (on) {
      present_[key >> 6] |= uint64_t{1} << (key & 63);
    } else {
      present_[key >> 6] &= ~(uint64_t{1} << (key & 63));
    }
  }

  // Entries usually share one size: it is kept once, and a per-key array (an
  // extra cache miss per eviction) only once a second size arrives.
  uint32_t uniform_bytes_ = 0;     // the size of every entry while sizes_ is empty; 0 = none yet
  std::vector<uint32_t> sizes_;    // bytes of each resident key (0 = absent), or empty
  std::vector<uint64_t> present_;  // residency bits (the hot path: small, cache-friendly)
  size_t entries_ = 0;
  int64_t used_ = 0;
  NeuronCacheStats stats_;
};

}  // namespace sparseflash
