#include "engine/segmented_cache.h"

#include "absl/strings/str_cat.h"

namespace sparseflash {

absl::StatusOr<WarmOrder> ParseWarmOrder(const std::string& name) {
  if (name == "none") return WarmOrder::kNone;
  if (name == "rank") return WarmOrder::kRank;
  if (name == "index") return WarmOrder::kIndex;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown warm order '", name, "'; known: none, rank, index"));
}

absl::StatusOr<std::unique_ptr<SegmentedCache>> SegmentedCache::Create(
    const SegmentedCacheOptions& o, const std::vector<CacheKey>& ranked) {
  if (o.hot_share < 0 || o.hot_share > 1) {
    return absl::InvalidArgumentError(absl::StrCat("hot_share ", o.hot_share, " not in [0, 1]"));
  }
  auto cache = std::unique_ptr<SegmentedCache>(new SegmentedCache());
  cache->options_ = o;
  cache->hot_.assign((static_cast<size_t>(o.key_space) + 63) / 64, 0);
  const int64_t hot_capacity = static_cast<int64_t>(o.hot_share * o.capacity_bytes);
  size_t next = 0;
  while (next < ranked.size() && cache->hot_bytes_ + o.neuron_bytes <= hot_capacity) {
    const CacheKey k = ranked[next++];
    cache->hot_[k >> 6] |= uint64_t{1} << (k & 63);
    cache->hot_bytes_ += o.neuron_bytes;
  }
  NeuronCacheOptions cold;
  cold.key_space = o.key_space;
  cold.capacity_bytes = o.capacity_bytes - cache->hot_bytes_;
  cold.policy = o.cold_policy;
  cold.entry_bytes = o.neuron_bytes;
  cold.window_tokens = o.window_tokens;
  cold.oracle = o.oracle;
  absl::StatusOr<std::unique_ptr<NeuronCache>> made = NeuronCache::Create(cold);
  if (!made.ok()) return made.status();
  cache->cold_ = *std::move(made);
  // Fill coldest-first so that recency policies see the hottest as most recent.
  std::vector<CacheKey> warm;
  int64_t room = cold.capacity_bytes;
  auto take = [&](CacheKey k) {
    if (room < o.neuron_bytes) return false;
    warm.push_back(k);
    room -= o.neuron_bytes;
    return true;
  };
  if (o.warm == WarmOrder::kRank) {
    while (next < ranked.size() && take(ranked[next])) ++next;
  } else if (o.warm == WarmOrder::kIndex) {
    for (CacheKey k = 0; k < o.key_space; ++k) {
      if (!cache->hot(k) && !take(k)) break;
    }
  }
  for (auto it = warm.rbegin(); it != warm.rend(); ++it) {
    cache->cold_->Preload(*it, o.neuron_bytes);
  }
  return cache;
}

}  // namespace sparseflash
