// SIEVE (Zhang et al., NSDI '24): a FIFO queue with a visited bit per key and a
// hand that moves from the oldest key towards the newest, clearing visited bits
// and evicting the first key not visited since the hand last passed.
#include "common/index_list.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Sieve : public EvictionPolicy {
 public:
  explicit Sieve(uint32_t keys) : queue_(keys), visited_(keys, 0) {}
  void OnHit(CacheKey key) override { visited_[key] = 1; }
  void OnInsert(CacheKey key) override {
    visited_[key] = 0;
    queue_.PushFront(key);  // newest at the front
  }
  CacheKey Evict() override {
    uint32_t hand = hand_ != IndexList::kNil ? hand_ : queue_.back();
    while (visited_[hand]) {
      visited_[hand] = 0;
      hand = queue_.prev(hand) != IndexList::kNil ? queue_.prev(hand) : queue_.back();
    }
    hand_ = queue_.prev(hand);  // kNil when the hand reached the newest key
    queue_.Unlink(hand);
    return hand;
  }

 private:
  IndexList queue_;
  std::vector<uint8_t> visited_;
  uint32_t hand_ = IndexList::kNil;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSieve(const PolicyOptions& o) {
  return std::make_unique<Sieve>(o.key_space);
}

}  // namespace sparseflash
