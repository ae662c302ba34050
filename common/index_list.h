// A doubly linked list over dense indices [0, n) with intrusive links (prev and
// next of an index side by side, one cache line): O(1) push, unlink and
// move-to-front without allocation. Used by LRU-like structures over neuron
// indices. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace sparseflash {

class IndexList {
 public:
  static constexpr uint32_t kNil = ~0u;

  explicit IndexList(uint32_t n) : links_(n, Link{kNil, kNil}) {}

  uint32_t front() const { return head_; }
  uint32_t back() const { return tail_; }
  bool empty() const { return head_ == kNil; }
  uint32_t prev(uint32_t i) const { return links_[i].prev; }  // towards the front
  // Hints that index i is linked or unlinked soon.
  void Prefetch(uint32_t i) const { __builtin_prefetch(&links_[i], 1); }

  void PushFront(uint32_t i) {
    links_[i] = {kNil, head_};
    (head_ == kNil ? tail_ : links_[head_].prev) = i;
    head_ = i;
  }
  void Unlink(uint32_t i) {
    const Link l = links_[i];
    (l.prev == kNil ? head_ : links_[l.prev].next) = l.next;
    (l.next == kNil ? tail_ : links_[l.next].prev) = l.prev;
  }
  void MoveToFront(uint32_t i) {
    if (head_ == i) return;
    Unlink(i);
    PushFront(i);
  }

 private:
  struct Link {
    uint32_t prev, next;
  };
  std::vector<Link> links_;
  uint32_t head_ = kNil, tail_ = kNil;
};

}  // namespace sparseflash
