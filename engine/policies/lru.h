// LRU: evicts the least recently used key, exactly, kept as an access log
// (engine/policies/access_log.h). Declared here (final) so the neuron cache
// can call it without a virtual call on its hottest path.
#pragma once

#include <cstdint>

#include "engine/eviction_policy.h"
#include "engine/policies/access_log.h"

namespace sparseflash {

class LruPolicy final : public EvictionPolicy {
 public:
  // `capacity_entries`: the most keys the cache holds (0: unknown).
  explicit LruPolicy(uint32_t keys, size_t capacity_entries = 0)
      : recency_(keys, capacity_entries) {}

  void OnHit(CacheKey key) override { recency_.Append(key); }
  void OnInsert(CacheKey key) override { recency_.Add(key); }
  CacheKey Evict() override { return recency_.PopFront(); }
  // Entries the access log holds (live and superseded), for tests of its bound.
  size_t log_entries() const { return recency_.entries(); }
  size_t log_room() const { return recency_.room(); }

 private:
  AccessLog recency_;  // the cached keys, least recent first
};

}  // namespace sparseflash
