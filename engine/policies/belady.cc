// Belady's MIN: evicts the resident key whose next use is furthest in the
// future, read from the trace by an AccessOracle. An upper bound on any real
// policy's hit rate (for equal-sized entries). Lazy 4-ary max-heap of (next
// use, key) packed in 64 bits (ties: the larger key leaves first), a node's
// four children in one cache line: an entry is stale once its key was accessed
// again (a key's next use only grows while it is resident) or left. A key's own
// state is its current next use in 32 bits (0 while absent: a next use is
// always after the current request or token), so the per-key array is half the
// size. The heap is rebuilt from its live entries when stale ones outnumber
// them, so it stays within a small multiple of the cache's entries.
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
    while (true) {
      const uint64_t top = heap_[0];
      PopTop();
      const auto key = static_cast<CacheKey>(top);
      if (Live(top)) {
        next_[key] = kAbsent;
        --live_;
        return key;
      }
    }
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
    size_t out = 0;
    for (uint64_t e : heap_) {
      if (Live(e)) heap_[out++] = e;
    }
    heap_.resize(out);
    for (size_t i = out; i-- > 0;) SiftDown(i, heap_[i]);
  }

  const AccessOracle* oracle_;
  std::vector<uint32_t> next_;  // per resident key: its next use; kAbsent otherwise
  size_t live_ = 0;
  std::vector<uint64_t> heap_;  // (next use << 32 | key), a max-heap
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeBelady(const PolicyOptions& o) {
  SF_CHECK(o.oracle != nullptr);
  return std::make_unique<Belady>(o.key_space, o.oracle);
}

}  // namespace sparseflash
