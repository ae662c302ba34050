// LFU: evicts the least frequently used key; ties go to the least recently used.
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
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
  void OnInsert(CacheKey key) override {
    entries_[key] = {1, ++clock_};
    order_.insert({1, clock_, key});
  }
  CacheKey Evict() override {
    CacheKey victim = std::get<2>(*order_.begin());
    order_.erase(order_.begin());
    entries_.erase(victim);
    return victim;
  }

 private:
  struct Entry {
    uint64_t count;
    uint64_t last;
  };
  uint64_t clock_ = 0;
  absl::flat_hash_map<CacheKey, Entry> entries_;
  std::set<std::tuple<uint64_t, uint64_t, CacheKey>> order_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeLfu(const PolicyOptions&) { return std::make_unique<Lfu>(); }

}  // namespace sparseflash
