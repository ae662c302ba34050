// A doubly linked list over dense indices [0, n) with intrusive prev/next arrays:
// O(1) push, unlink and move-to-front without allocation. Used by LRU-like
// structures over neuron indices. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace sparseflash {

class IndexList {
 public:
  static constexpr uint32_t kNil = ~0u;

  explicit IndexList(uint32_t n) : prev_(n, kNil), next_(n, kNil) {}

  uint32_t front() const { return head_; }
  uint32_t back() const { return tail_; }
  bool empty() const { return head_ == kNil; }
  uint32_t prev(uint32_t i) const { return prev_[i]; }  // towards the front

  void PushFront(uint32_t i) {
    prev_[i] = kNil;
    next_[i] = head_;
    (head_ == kNil ? tail_ : prev_[head_]) = i;
    head_ = i;
  }
  void Unlink(uint32_t i) {
    uint32_t p = prev_[i], n = next_[i];
    (p == kNil ? head_ : next_[p]) = n;
    (n == kNil ? tail_ : prev_[n]) = p;
  }
  void MoveToFront(uint32_t i) {
    if (head_ == i) return;
    Unlink(i);
    PushFront(i);
  }

 private:
  std::vector<uint32_t> prev_, next_;
  uint32_t head_ = kNil, tail_ = kNil;
};

}  // namespace sparseflash
