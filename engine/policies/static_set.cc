// Static hot set (PowerInfer-1 style): the cache is filled once from an offline
// profile and never changes; misses are read and used but not cached.
#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class StaticSet : public EvictionPolicy {
 public:
  explicit StaticSet(uint32_t keys) : order_(keys) {}
  void OnHit(CacheKey) override {}
  void OnInsert(CacheKey key) override { order_.PushFront(key); }
  // Only reached if the cache shrinks below its preloaded contents.
  CacheKey Evict() override {
    CacheKey victim = order_.back();
    order_.Unlink(victim);
    return victim;
  }
  bool admits_misses() const override { return false; }

 private:
  IndexList order_;  // preloaded coldest-first, so the back is the least important
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeStaticSet(const PolicyOptions& o) {
  return std::make_unique<StaticSet>(o.key_space);
}

}  // namespace sparseflash
