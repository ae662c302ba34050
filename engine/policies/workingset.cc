// A page cache with refault protection, as Linux's multi-generational LRU
// (Android's GKI 6.x kernels) protects the working set from a scan: new keys
// enter on probation; a key missed again within the cache's reach after it was
// evicted (no more evictions in between than the cache holds entries) belonged
// to the working set and is protected, as is a probation key that is hit, while
// the protected list has room (seven-eighths of the entries, [assumption]) or
// its oldest key has gone unused for two cache-fulls of misses (then demoted).
// Evictions take the oldest probation key. Under a cyclic scan larger than the
// cache strict LRU hits nothing; this keeps a stable part of the file once the
// cache holds at least half of it, and reads the rest every cycle.
#include <algorithm>
#include <vector>

#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class WorkingSet : public EvictionPolicy {
 public:
  WorkingSet(uint32_t keys, int64_t capacity)
      : probation_(keys),
        protected_(keys),
        where_(keys, kOut),
        evicted_at_(keys, 0),
        last_use_(keys, 0),
        capacity_(std::max<int64_t>(1, capacity)),
        protected_max_(capacity_ - std::max<int64_t>(1, capacity_ / 8)) {}

  void OnHit(CacheKey key) override {
    last_use_[key] = misses_;
    if (where_[key] == kProtected) return protected_.MoveToFront(key);
    probation_.Unlink(key);
    --probation_size_;
    Place(key, /*deserves_protection=*/true);
  }
  void OnInsert(CacheKey key) override {
    ++misses_;
    last_use_[key] = misses_;
    const uint64_t at = evicted_at_[key];
    Place(key, at > 0 && evictions_ - at <= static_cast<uint64_t>(capacity_));
  }
  CacheKey Evict() override {
    if (probation_size_ == 0) Demote();
    const CacheKey key = probation_.back();
    probation_.Unlink(key);
    --probation_size_;
    where_[key] = kOut;
    evicted_at_[key] = ++evictions_;
    return key;
  }

 private:
  enum : uint8_t { kOut, kProbation, kProtected };

  void Place(CacheKey key, bool deserves_protection) {
    if (deserves_protection && protected_size_ >= protected_max_ && protected_size_ > 0 &&
        misses_ - last_use_[protected_.back()] > 2 * static_cast<uint64_t>(capacity_)) {
      Demote();  // the oldest protected key went stale
    }
    if (deserves_protection && protected_size_ < protected_max_) {
      where_[key] = kProtected;
      protected_.PushFront(key);
      ++protected_size_;
      return;
    }
    where_[key] = kProbation;
    probation_.PushFront(key);
    ++probation_size_;
  }
  void Demote() {
    const CacheKey key = protected_.back();
    protected_.Unlink(key);
    --protected_size_;
    where_[key] = kProbation;
    probation_.PushFront(key);
    ++probation_size_;
  }

  IndexList probation_, protected_;  // most recent first
  std::vector<uint8_t> where_;
  std::vector<uint64_t> evicted_at_;  // eviction count when the key left; 0 = never
  std::vector<uint64_t> last_use_;    // miss count at the key's last use
  int64_t capacity_, protected_max_;
  int64_t probation_size_ = 0, protected_size_ = 0;
  uint64_t evictions_ = 0, misses_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeWorkingSet(const PolicyOptions& o) {
  return std::make_unique<WorkingSet>(o.key_space, o.capacity_entries);
}

}  // namespace sparseflash
