// Belady's MIN: evicts the resident key whose next use is furthest in the future,
// read from the trace by an AccessOracle. An upper bound on any real policy's hit
// rate (for equal-sized entries). Lazy max-heap: an entry is stale once its key
// was accessed again (stamp) or left.
#include <queue>
#include <vector>

#include "common/check.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Belady : public EvictionPolicy {
 public:
  Belady(uint32_t keys, const AccessOracle* oracle) : oracle_(oracle), stamp_(keys, 0) {}

  void OnHit(CacheKey key) override { Push(key); }
  void OnInsert(CacheKey key) override { Push(key); }
  CacheKey Evict() override {
    while (true) {
      Entry top = heap_.top();
      heap_.pop();
      if (stamp_[top.key] == top.stamp) {
        stamp_[top.key] = 0;
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
    stamp_[key] = ++clock_;
    heap_.push({oracle_->NextUse(key), key, stamp_[key]});
  }

  const AccessOracle* oracle_;
  std::vector<uint32_t> stamp_;  // 0 = not resident
  uint32_t clock_ = 0;
  std::priority_queue<Entry> heap_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeBelady(const PolicyOptions& o) {
  SF_CHECK(o.oracle != nullptr);
  return std::make_unique<Belady>(o.key_space, o.oracle);
}

}  // namespace sparseflash
