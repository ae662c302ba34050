// PowerInfer-2's neuron cache (v3 section 4.2): a hot region holding the
// neurons an offline profile ranks hottest (loaded once, the NPU's dense rows)
// and a cold region of single neurons under a pluggable eviction policy (LRU by
// default). The pinned region (attention, KV cache, predictors, scales) is
// accounted for by the strategy, outside this cache. Counts hits and accesses
// of predicted neurons. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/neuron_cache.h"

namespace sparseflash {

enum class WarmOrder { kNone, kRank, kIndex };
absl::StatusOr<WarmOrder> ParseWarmOrder(const std::string& name);

struct SegmentedCacheOptions {
  uint32_t key_space = 0;
  int64_t capacity_bytes = 0;
  int64_t neuron_bytes = 0;  // DRAM bytes of one cached neuron
  double hot_share = 0;      // share of the capacity for the hot region
  std::string cold_policy = "lru";
  int window_tokens = 4;
  const AccessOracle* oracle = nullptr;
  WarmOrder warm = WarmOrder::kRank;  // how the cold region is filled before the run
};

class SegmentedCache {
 public:
  // `ranked`: keys hottest first (from the offline profile).
  static absl::StatusOr<std::unique_ptr<SegmentedCache>> Create(
      const SegmentedCacheOptions& options, const std::vector<CacheKey>& ranked);

  // Counts an access; true if the neuron is resident (hot or cold).
  bool Lookup(CacheKey key) {
    ++accesses_;
    if (hot(key)) {
      ++hot_hits_;
      return true;
    }
    return cold_->Lookup(key);
  }
  // Lookup of a key known not to be hot.
  bool LookupCold(CacheKey key) {
    ++accesses_;
    return cold_->Lookup(key);
  }
  // Counts `n` accesses of hot keys (Lookup of each, in bulk).
  void CountHotHits(uint64_t n) {
    accesses_ += n;
    hot_hits_ += n;
  }
  void Prefetch(CacheKey key) const { cold_->Prefetch(key); }
  bool uses_hints() const { return cold_->uses_hints(); }
  // A missing neuron was read in full: offer it to the cold region.
  void Fetched(CacheKey key) { cold_->Insert(key, options_.neuron_bytes); }
  void OnTokenEnd() { cold_->OnTokenEnd(); }

  bool hot(CacheKey key) const { return (hot_[key >> 6] >> (key & 63)) & 1; }
  // The hot region as one bit per key.
  const std::vector<uint64_t>& hot_bits() const { return hot_; }
  uint64_t hits() const { return hot_hits_ + cold_->stats().hits; }
  uint64_t accesses() const { return accesses_; }
  int64_t hot_bytes() const { return hot_bytes_; }
  const NeuronCache& cold() const { return *cold_; }

 private:
  SegmentedCacheOptions options_;
  std::vector<uint64_t> hot_;  // bit per key
  int64_t hot_bytes_ = 0;
  std::unique_ptr<NeuronCache> cold_;
  uint64_t accesses_ = 0;
  uint64_t hot_hits_ = 0;
};

}  // namespace sparseflash
