#include "traces/array_lru.h"

namespace sparseflash {

ArrayLru::ArrayLru(uint32_t keys, uint64_t capacity)
    : capacity_(capacity), order_(keys), present_(keys, 0) {}

bool ArrayLru::Access(uint32_t key) {
  if (present_[key]) {
    order_.MoveToFront(key);
    return true;
  }
  if (capacity_ == 0) return false;
  if (size_ == capacity_) {
    uint32_t victim = order_.back();
    order_.Unlink(victim);
    present_[victim] = 0;
    --size_;
  }
  present_[key] = 1;
  order_.PushFront(key);
  ++size_;
  return false;
}

}  // namespace sparseflash
