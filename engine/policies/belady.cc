// Belady's MIN: evicts the resident key whose next use is furthest in the
// future, read from the trace by an AccessOracle. An upper bound on any real
// policy's hit rate (for equal-sized entries). Lazy 4-ary max-heap of (next
// use, key) packed in 64 bits (ties: the larger key leaves first), a node's
// four children in one cache line: an entry is stale once its key was accessed
// again (a key's next use only grows while it is resident) or left. The
// victim's entry stays at the root until the insertion that follows a miss
// takes its place: one sift instead of two, and a far-future key stops near
// the root. A key's own state is its current next use in 32 bits (0 while
// absent: a next use is always after the current request or token), so the
// per-key array is half the size. The heap is rebuilt from its live entries
// when stale ones outnumber them, so it stays within a small multiple of the
// cache's entries.
#include <algorithm>
#include <vector>

#include "common/check.h"
#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class Belady : public EvictionPolicy {
 public:
  Belady(uint32_t keys, const AccessOracle* oracle) : oracle_(oracle), next_(keys, kAbsent) {}

  void OnHit(CacheKey key) override { Push(key); }
  void Prefetch(CacheKey key) const override {
    __builtin_prefetch(&next_[key], 1);
    oracle_->Prefetch(key);
  }
  bool UsesHints() const override { return true; }
  void OnInsert(CacheKey key) override {
    ++live_;
    Push(key);
  }
  CacheKey Evict() override {
    while (!Live(heap_[0])) PopTop();
    const auto key = static_cast<CacheKey>(heap_[0]);
    next_[key] = kAbsent;
    --live_;
    root_evicted_ = true;
    return key;
  }

 private:
  static constexpr uint32_t kAbsent = 0;  // never a next use: those come after now
  static constexpr size_t kArity = 4;

  static uint64_t Pack(uint32_t next_use, CacheKey key) { return uint64_t{next_use} << 32 | key; }
  bool Live(uint64_t entry) const {
    return next_[static_cast<CacheKey>(entry)] == static_cast<uint32_t>(entry >> 32);
  }
  void Push(CacheKey key) {
    if (heap_.size() > 2 * live_ + 1024) Rebuild();
    const uint32_t next_use = oracle_->NextUse(key);
    SF_CHECK(next_use != kAbsent);
    if (next_[key] == next_use) return;  // its live entry says the same already
    next_[key] = next_use;
    if (root_evicted_) {  // sifts down from the root: a far-future key stops near it
      root_evicted_ = false;
      SiftDown(0, Pack(next_use, key));
      return;
    }
    heap_.push_back(Pack(next_use, key));
    SiftUp(heap_.size() - 1);
  }
  void SiftUp(size_t i) {
    const uint64_t e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (heap_[parent] >= e) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void PopTop() {
    root_evicted_ = false;
    const uint64_t e = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0, e);
  }
  // Places `e` at hole `i`, moving larger children up.
  void SiftDown(size_t i, uint64_t e) {
    const size_t n = heap_.size();
    while (true) {
      const size_t first = i * kArity + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t last = std::min(first + kArity, n);
      for (size_t c = first + 1; c < last; ++c) {
        if (heap_[c] > heap_[best]) best = c;
      }
      if (heap_[best] <= e) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  // Keeps the live entries only.
  void Rebuild() {
    root_evicted_ = false;  // its entry is stale: dropped below
    // Bound by its random reads of next_: asked for a few entries ahead.
    constexpr size_t kAhead = 16;
    size_t out = 0;
    for (size_t i = 0; i < heap_.size(); ++i) {
      if (i + kAhead < heap_.size()) {
        __builtin_prefetch(&next_[static_cast<CacheKey>(heap_[i + kAhead])]);
      }
      const uint64_t e = heap_[i];
      if (Live(e)) heap_[out++] = e;
    }
    heap_.resize(out);
    for (size_t i = out; i-- > 0;) SiftDown(i, heap_[i]);
  }

  const AccessOracle* oracle_;
  std::vector<uint32_t> next_;  // per resident key: its next use; kAbsent otherwise
  size_t live_ = 0;
  std::vector<uint64_t> heap_;  // (next use << 32 | key), a max-heap
  bool root_evicted_ = false;   // heap_[0] is the last victim's entry (stale)
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeBelady(const PolicyOptions& o) {
  SF_CHECK(o.oracle != nullptr);
  return std::make_unique<Belady>(o.key_space, o.oracle);
}

}  // namespace sparseflash
