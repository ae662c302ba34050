// SIEVE (Zhang et al., NSDI '24): a FIFO queue with a visited bit per key and a
// hand that moves from the oldest key towards the newest, clearing visited bits
// and evicting the first key not visited since the hand last passed.
#include <list>

#include "absl/container/flat_hash_map.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Sieve : public EvictionPolicy {
 public:
  void OnHit(CacheKey key) override { where_[key]->visited = true; }
  void OnInsert(CacheKey key) override {
    queue_.push_front({key, false});  // newest at the front
    where_[key] = queue_.begin();
  }
  CacheKey Evict() override {
    auto hand = hand_valid_ ? hand_ : std::prev(queue_.end());
    while (hand->visited) {
      hand->visited = false;
      hand = hand == queue_.begin() ? std::prev(queue_.end()) : std::prev(hand);
    }
    CacheKey victim = hand->key;
    hand_valid_ = hand != queue_.begin();
    if (hand_valid_) hand_ = std::prev(hand);
    queue_.erase(hand);
    where_.erase(victim);
    return victim;
  }

 private:
  struct Node {
    CacheKey key;
    bool visited;
  };
  std::list<Node> queue_;
  std::list<Node>::iterator hand_;
  bool hand_valid_ = false;
  absl::flat_hash_map<CacheKey, std::list<Node>::iterator> where_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeSieve(const PolicyOptions&) {
  return std::make_unique<Sieve>();
}

}  // namespace sparseflash
