// Belady's MIN: evicts the resident key whose next use is furthest in the future,
// read from the trace by an AccessOracle. An upper bound on any real policy's hit
// rate (for equal-sized entries). Lazy max-heap: an entry is stale once its key
// was accessed again (stamp) or left; the heap is rebuilt from its live entries
// when stale ones outnumber them, so it stays within a small multiple of the
// cache's entries.
#include <algorithm>
#include <vector>

#include "common/check.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Belady : public EvictionPolicy {
 public:
  Belady(uint32_t keys, const AccessOracle* oracle) : oracle_(oracle), stamp_(keys, 0) {}

  void OnHit(CacheKey key) override { Push(key); }
  void Prefetch(CacheKey key) const override {
    __builtin_prefetch(&stamp_[key], 1);
    oracle_->Prefetch(key);
  }
  void OnInsert(CacheKey key) override {
    ++live_;
    Push(key);
  }
  CacheKey Evict() override {
    while (true) {
      std::pop_heap(heap_.begin(), heap_.end());
      const Entry top = heap_.back();
      heap_.pop_back();
      if (stamp_[top.key] == top.stamp) {
        stamp_[top.key] = 0;
        --live_;
        return top.key;
      }
    }
  }

 private:
  struct Entry {
    uint32_t next_use;
    CacheKey key;
    uint32_t stamp;
    bool operator<(const Entry& o) const {
      return next_use != o.next_use ? next_use < o.next_use : key < o.key;
    }
  };
  void Push(CacheKey key) {
    if (clock_ == UINT32_MAX || heap_.size() > 2 * live_ + 1024) Rebuild();
    stamp_[key] = ++clock_;
    heap_.push_back({oracle_->NextUse(key), key, stamp_[key]});
    std::push_heap(heap_.begin(), heap_.end());
  }
  // Keeps the live entries only, stamped afresh from 1.
  void Rebuild() {
    size_t out = 0;
    clock_ = 0;
    for (const Entry& e : heap_) {
      if (stamp_[e.key] != e.stamp) continue;
      stamp_[e.key] = ++clock_;
      heap_[out++] = {e.next_use, e.key, clock_};
    }
    heap_.resize(out);
    std::make_heap(heap_.begin(), heap_.end());
  }

  const AccessOracle* oracle_;
  std::vector<uint32_t> stamp_;  // 0 = not resident
  uint32_t clock_ = 0;
  size_t live_ = 0;
  std::vector<Entry> heap_;  // a max-heap on next use
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeBelady(const PolicyOptions& o) {
  SF_CHECK(o.oracle != nullptr);
  return std::make_unique<Belady>(o.key_space, o.oracle);
}

}  // namespace sparseflash
