// A queue of keys that pops the key of smallest fixed weight, the earliest
// pushed among equal weights, and removes any key in O(1): one FIFO per
// distinct weight (ranked once, at construction) and a two-level bitmap of the
// non-empty ones. Each FIFO is a log of pushes: removing a key only forgets
// its position (no neighbours to relink, so a removal's memory accesses are
// independent of each other and can be prefetched), and a pop skips entries
// whose key left. A FIFO is compacted when its left entries outnumber its keys
// and emptied with its last key. The order is exactly that of a heap of
// (weight, push order) pairs, without its stale entries or its log-time,
// cache-missing sifts. Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace sparseflash {

class WeightQueue {
 public:
  static constexpr uint32_t kAbsent = ~0u;

  // Keys are [0, keys); key k weighs weight[k] (0 beyond the vector's end).
  WeightQueue(uint32_t keys, const std::vector<float>& weight)
      : rank_of_(keys), at_(keys, kAbsent) {
    std::vector<float> distinct(weight.begin(),
                                weight.begin() + std::min<size_t>(keys, weight.size()));
    distinct.push_back(0.0f);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (uint32_t k = 0; k < keys; ++k) {
      const float w = k < weight.size() ? weight[k] : 0.0f;
      rank_of_[k] = static_cast<uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), w) -
                                          distinct.begin());
    }
    fifos_.resize(distinct.size());
    words_.assign((distinct.size() + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
  }

  bool empty() const { return size_ == 0; }
  int64_t size() const { return size_; }
  bool contains(uint32_t key) const { return at_[key] != kAbsent; }
  // Entries the FIFOs' logs hold (queued and left), for tests of their bound.
  size_t log_entries() const {
    size_t n = 0;
    for (const Fifo& f : fifos_) n += f.log.size();
    return n;
  }
  // Hints that contains(key), Push(key) or Remove(key) is asked soon.
  void Prefetch(uint32_t key) const {
    __builtin_prefetch(&at_[key], 1);
    __builtin_prefetch(&rank_of_[key]);
  }

  void Push(uint32_t key) {
    const uint32_t rank = rank_of_[key];
    Fifo& f = fifos_[rank];
    at_[key] = static_cast<uint32_t>(f.log.size());
    f.log.push_back(key);
    if (f.live++ == 0) Mark(rank);
    ++size_;
    if (f.log.size() - f.head > 2 * size_t{f.live} + 64) Compact(f);
  }
  void Remove(uint32_t key) {
    at_[key] = kAbsent;
    Left(rank_of_[key]);
  }
  // The key of smallest weight, earliest pushed among equals; the queue must
  // not be empty.
  uint32_t Pop() {
    const uint32_t rank = LowestRank();
    Fifo& f = fifos_[rank];
    while (at_[f.log[f.head]] != f.head) ++f.head;
    const uint32_t key = f.log[f.head++];
    at_[key] = kAbsent;
    Left(rank);
    return key;
  }

 private:
  struct Fifo {
    std::vector<uint32_t> log;  // pushes, oldest first, from head
    uint32_t head = 0;
    uint32_t live = 0;  // keys queued here
  };

  // A key of weight rank `rank` left the queue.
  void Left(uint32_t rank) {
    Fifo& f = fifos_[rank];
    --size_;
    if (--f.live == 0) {
      f.log.clear();
      f.head = 0;
      Unmark(rank);
    }
  }
  // Keeps the queued keys' entries, in order, from position 0.
  void Compact(Fifo& f) {
    uint32_t out = 0;
    for (size_t i = f.head; i < f.log.size(); ++i) {
      const uint32_t key = f.log[i];
      if (at_[key] != i) continue;
      at_[key] = out;
      f.log[out++] = key;
    }
    f.log.resize(out);
    f.head = 0;
  }
  void Mark(uint32_t b) {
    words_[b >> 6] |= uint64_t{1} << (b & 63);
    summary_[b >> 12] |= uint64_t{1} << ((b >> 6) & 63);
  }
  void Unmark(uint32_t b) {
    uint64_t& word = words_[b >> 6];
    word &= ~(uint64_t{1} << (b & 63));
    if (word == 0) summary_[b >> 12] &= ~(uint64_t{1} << ((b >> 6) & 63));
  }
  uint32_t LowestRank() const {
    size_t s = 0;
    while (summary_[s] == 0) ++s;
    const size_t w = s * 64 + std::countr_zero(summary_[s]);
    return static_cast<uint32_t>(w * 64 + std::countr_zero(words_[w]));
  }

  std::vector<uint32_t> rank_of_;  // per key: the rank of its weight
  std::vector<uint32_t> at_;       // per key: its entry in its FIFO's log, or kAbsent
  std::vector<Fifo> fifos_;        // per weight rank
  std::vector<uint64_t> words_;    // bit per rank: its FIFO is not empty
  std::vector<uint64_t> summary_;  // bit per word of words_: not zero
  int64_t size_ = 0;
};

}  // namespace sparseflash
