// An LRU set over dense integer keys [0, n) with a fixed capacity, using
// intrusive index links: O(1) per access, no allocation after construction.
// Used by trace statistics as a policy-free reference hit rate. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "common/index_list.h"

namespace sparseflash {

class ArrayLru {
 public:
  ArrayLru(uint32_t keys, uint64_t capacity);

  // Touches `key`; returns true on a hit. A miss inserts it, evicting the LRU key.
  bool Access(uint32_t key);
  uint64_t size() const { return size_; }

 private:
  uint64_t capacity_;
  uint64_t size_ = 0;
  IndexList order_;  // most recent first
  std::vector<uint8_t> present_;
};

}  // namespace sparseflash
