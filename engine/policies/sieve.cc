// SIEVE (Zhang et al., NSDI '24): a FIFO queue with a visited bit per key and a
// hand that moves from the oldest key towards the newest, clearing visited bits
// and evicting the first key not visited since the hand last passed; past the
// newest key it starts again at the oldest.
//
// The queue is an array in insertion order, oldest first: an insertion
// appends, an eviction leaves a hole where the hand stands, and the holes are
// squeezed out once they outnumber the keys. The hand walks the array in order
// (no links to follow, none to rewrite), so the only random accesses are the
// visited bytes of the keys it passes.
#include <vector>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Sieve : public EvictionPolicy {
 public:
  explicit Sieve(uint32_t keys) : visited_(keys, 0) {}
  void OnHit(CacheKey key) override { visited_[key] = 1; }
  void OnInsert(CacheKey key) override {
    visited_[key] = 0;
    queue_.push_back(key);
  }
  CacheKey Evict() override {
    // The hand wraps to the oldest key when it passed the newest at the last
    // eviction, or reaches the end now; holes are skipped.
    size_t at = hand_ < queue_.size() ? hand_ : 0;
    while (true) {
      if (at == queue_.size()) at = 0;
      const CacheKey key = queue_[at];
      if (key != kHole) {
        if (!visited_[key]) break;
        visited_[key] = 0;
      }
      ++at;
    }
    const CacheKey victim = queue_[at];
    queue_[at] = kHole;
    ++holes_;
    // Past the newest key the next eviction starts at the oldest, not at keys
    // inserted in between.
    hand_ = at + 1 < queue_.size() ? at + 1 : kWrapped;
    if (holes_ > queue_.size() - holes_ + 64) Squeeze();
    return victim;
  }

 private:
  static constexpr CacheKey kHole = ~CacheKey{0};
  static constexpr size_t kWrapped = ~size_t{0};

  // Drops the holes, keeping the keys' order and the hand on the same key.
  void Squeeze() {
    size_t out = 0;
    size_t hand = kWrapped;
    for (size_t i = 0; i < queue_.size(); ++i) {
      if (i == hand_) hand = out;
      if (queue_[i] != kHole) queue_[out++] = queue_[i];
    }
    queue_.resize(out);
    hand_ = hand;
    holes_ = 0;
  }

  std::vector<uint8_t> visited_;
  std::vector<CacheKey> queue_;  // oldest first, with holes
  size_t holes_ = 0;
  size_t hand_ = kWrapped;  // where the next eviction looks first
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSieve(const PolicyOptions& o) {
  return std::make_unique<Sieve>(o.key_space);
}

}  // namespace sparseflash
