// LFU: evicts the least frequently used key; ties go to the least recently used.
#include <set>
#include <tuple>

#include <vector>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Lfu : public EvictionPolicy {
 public:
  void OnHit(CacheKey key) override {
    Entry& e = entries_[key];
    order_.erase({e.count, e.last, key});
    ++e.count;
    e.last = ++clock_;
    order_.insert({e.count, e.last, key});
  }
  explicit Lfu(uint32_t keys) : entries_(keys) {}
  void OnInsert(CacheKey key) override {
    entries_[key] = {1, ++clock_};
    order_.insert({1, clock_, key});
  }
  CacheKey Evict() override {
    CacheKey victim = std::get<2>(*order_.begin());
    order_.erase(order_.begin());
    return victim;
  }

 private:
  struct Entry {
    uint64_t count;
    uint64_t last;
  };
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
  std::set<std::tuple<uint64_t, uint64_t, CacheKey>> order_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeLfu(const PolicyOptions& o) {
  return std::make_unique<Lfu>(o.key_space);
}

}  // namespace sparseflash
