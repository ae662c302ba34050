// A queue of keys that pops the key of smallest fixed weight, the earliest
// pushed among equal weights, and removes any key in O(1): one FIFO list per
// distinct weight (ranked once, at construction) and a two-level bitmap of the
// non-empty lists. The order is exactly that of a heap of (weight, push order)
// pairs, without its stale entries or its log-time, cache-missing sifts.
// Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace sparseflash {

class WeightQueue {
 public:
  static constexpr uint32_t kNil = ~0u;

  // Keys are [0, keys); key k weighs weight[k] (0 beyond the vector's end).
  WeightQueue(uint32_t keys, const std::vector<float>& weight)
      : bucket_of_(keys), next_(keys, kNil), prev_(keys, kNil), queued_(keys, 0) {
    std::vector<float> distinct(weight.begin(),
                                weight.begin() + std::min<size_t>(keys, weight.size()));
    distinct.push_back(0.0f);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (uint32_t k = 0; k < keys; ++k) {
      const float w = k < weight.size() ? weight[k] : 0.0f;
      bucket_of_[k] = static_cast<uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), w) -
                                            distinct.begin());
    }
    head_.assign(distinct.size(), kNil);
    tail_.assign(distinct.size(), kNil);
    words_.assign((distinct.size() + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
  }

  bool empty() const { return size_ == 0; }
  int64_t size() const { return size_; }
  bool contains(uint32_t key) const { return queued_[key]; }
  // Hints that contains(key) is asked soon.
  void Prefetch(uint32_t key) const { __builtin_prefetch(&queued_[key]); }

  void Push(uint32_t key) {
    const uint32_t b = bucket_of_[key];
    next_[key] = kNil;
    prev_[key] = tail_[b];
    (tail_[b] == kNil ? head_[b] : next_[tail_[b]]) = key;
    tail_[b] = key;
    queued_[key] = 1;
    ++size_;
    Mark(b);
  }
  void Remove(uint32_t key) {
    const uint32_t b = bucket_of_[key];
    (prev_[key] == kNil ? head_[b] : next_[prev_[key]]) = next_[key];
    (next_[key] == kNil ? tail_[b] : prev_[next_[key]]) = prev_[key];
    queued_[key] = 0;
    --size_;
    if (head_[b] == kNil) Unmark(b);
  }
  // The key of smallest weight, earliest pushed among equals; the queue must
  // not be empty.
  uint32_t Pop() {
    const uint32_t key = head_[LowestBucket()];
    Remove(key);
    return key;
  }

 private:
  void Mark(uint32_t b) {
    words_[b >> 6] |= uint64_t{1} << (b & 63);
    summary_[b >> 12] |= uint64_t{1} << ((b >> 6) & 63);
  }
  void Unmark(uint32_t b) {
    uint64_t& word = words_[b >> 6];
    word &= ~(uint64_t{1} << (b & 63));
    if (word == 0) summary_[b >> 12] &= ~(uint64_t{1} << ((b >> 6) & 63));
  }
  uint32_t LowestBucket() const {
    size_t s = 0;
    while (summary_[s] == 0) ++s;
    const size_t w = s * 64 + std::countr_zero(summary_[s]);
    return static_cast<uint32_t>(w * 64 + std::countr_zero(words_[w]));
  }

  std::vector<uint32_t> bucket_of_;    // per key: the rank of its weight
  std::vector<uint32_t> next_, prev_;  // per key: its list links
  std::vector<uint8_t> queued_;
  std::vector<uint32_t> head_, tail_;  // per weight rank
  std::vector<uint64_t> words_;        // bit per rank: its list is not empty
  std::vector<uint64_t> summary_;      // bit per word of words_: not zero
  int64_t size_ = 0;
};

}  // namespace sparseflash
