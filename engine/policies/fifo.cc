// FIFO: evicts the key inserted first; hits change nothing.
#include <deque>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Fifo : public EvictionPolicy {
 public:
  void OnHit(CacheKey) override {}
  void OnInsert(CacheKey key) override { queue_.push_back(key); }
  CacheKey Evict() override {
    CacheKey victim = queue_.front();
    queue_.pop_front();
    return victim;
  }

 private:
  std::deque<CacheKey> queue_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeFifo(const PolicyOptions&) { return std::make_unique<Fifo>(); }

}  // namespace sparseflash
