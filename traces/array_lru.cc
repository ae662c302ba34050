#include "traces/array_lru.h"

namespace sparseflash {

ArrayLru::ArrayLru(uint32_t keys, uint64_t capacity)
    : capacity_(capacity), prev_(keys, kNil), next_(keys, kNil), present_(keys, 0) {}

void ArrayLru::Unlink(uint32_t key) {
  uint32_t p = prev_[key], n = next_[key];
  (p == kNil ? head_ : next_[p]) = n;
  (n == kNil ? tail_ : prev_[n]) = p;
}

void ArrayLru::PushFront(uint32_t key) {
  prev_[key] = kNil;
  next_[key] = head_;
  (head_ == kNil ? tail_ : prev_[head_]) = key;
  head_ = key;
}

bool ArrayLru::Access(uint32_t key) {
  if (present_[key]) {
    Unlink(key);
    PushFront(key);
    return true;
  }
  if (capacity_ == 0) return false;
  if (size_ == capacity_) {
    uint32_t victim = tail_;
    Unlink(victim);
    present_[victim] = 0;
    --size_;
  }
  present_[key] = 1;
  PushFront(key);
  ++size_;
  return false;
}

}  // namespace sparseflash
