// LFU: evicts the least frequently used key; ties go to the least recently used.
// O(1) per operation: one recency list per access count (the keys' links are
// shared, as a key sits in exactly one list) and the lowest non-empty count.
#include <vector>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Lfu : public EvictionPolicy {
 public:
  explicit Lfu(uint32_t keys) : links_(keys), count_(keys, 0), buckets_(2) {}

  void OnHit(CacheKey key) override {
    const uint32_t c = count_[key];
    Unlink(key, c);
    if (min_ == c && Empty(c)) min_ = c + 1;
    PushFront(key, c + 1);
  }
  void OnInsert(CacheKey key) override {
    PushFront(key, 1);
    min_ = 1;
  }
  CacheKey Evict() override {
    while (Empty(min_)) ++min_;
    CacheKey victim = buckets_[min_].tail;
    Unlink(victim, min_);
    count_[victim] = 0;
    return victim;
  }

 private:
  static constexpr uint32_t kNil = ~0u;
  struct Link {
    uint32_t prev = kNil, next = kNil;
  };
  struct Bucket {
    uint32_t head = kNil, tail = kNil;
  };

  bool Empty(uint32_t c) const { return c >= buckets_.size() || buckets_[c].head == kNil; }
  void PushFront(CacheKey key, uint32_t c) {
    if (c >= buckets_.size()) buckets_.resize(c + 1);
    Bucket& b = buckets_[c];
    links_[key] = {kNil, b.head};
    (b.head == kNil ? b.tail : links_[b.head].prev) = key;
    b.head = key;
    count_[key] = c;
  }
  void Unlink(CacheKey key, uint32_t c) {
    Bucket& b = buckets_[c];
    const Link l = links_[key];
    (l.prev == kNil ? b.head : links_[l.prev].next) = l.next;
    (l.next == kNil ? b.tail : links_[l.next].prev) = l.prev;
  }

  std::vector<Link> links_;
  std::vector<uint32_t> count_;
  std::vector<Bucket> buckets_;  // by access count
  uint32_t min_ = 1;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeLfu(const PolicyOptions& o) {
  return std::make_unique<Lfu>(o.key_space);
}

}  // namespace sparseflash
