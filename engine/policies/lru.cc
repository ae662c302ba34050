// LRU: evicts the least recently used key.
#include <list>

#include "absl/container/flat_hash_map.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Lru : public EvictionPolicy {
 public:
  void OnHit(CacheKey key) override { order_.splice(order_.begin(), order_, where_[key]); }
  void OnInsert(CacheKey key) override {
    order_.push_front(key);
    where_[key] = order_.begin();
  }
  CacheKey Evict() override {
    CacheKey victim = order_.back();
    order_.pop_back();
    where_.erase(victim);
    return victim;
  }

 private:
  std::list<CacheKey> order_;  // most recent first
  absl::flat_hash_map<CacheKey, std::list<CacheKey>::iterator> where_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeLru(const PolicyOptions&) { return std::make_unique<Lru>(); }

}  // namespace sparseflash
