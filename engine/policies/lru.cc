// LRU: evicts the least recently used key. Intrusive links over dense keys.
#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Lru : public EvictionPolicy {
 public:
  explicit Lru(uint32_t keys) : order_(keys) {}
  void OnHit(CacheKey key) override { order_.MoveToFront(key); }
  void OnInsert(CacheKey key) override { order_.PushFront(key); }
  CacheKey Evict() override {
    CacheKey victim = order_.back();
    order_.Unlink(victim);
    return victim;
  }

 private:
  IndexList order_;  // most recent first
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeLru(const PolicyOptions& o) {
  return std::make_unique<Lru>(o.key_space);
}

}  // namespace sparseflash
