// LRU: evicts the least recently used key. Exact LRU kept as an access log: a
// hit writes the key's latest log position (32 bits, to halve the random
// traffic) and appends the key (one random write, no neighbours to relink); eviction pops the log's
// front, skipping entries superseded by a later access. The log is compacted when superseded
// entries outnumber live ones or when evictions have consumed half of it, so it
// stays within a small multiple of the cache's entries. Declared here (final) so the neuron cache
// can call it without a virtual call on its hottest path.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/eviction_policy.h"

namespace sparseflash {

class LruPolicy final : public EvictionPolicy {
 public:
  explicit LruPolicy(uint32_t keys) : pos_(keys, kAbsent) {}

  void OnHit(CacheKey key) override { Append(key); }
  void Prefetch(CacheKey key) const override { __builtin_prefetch(&pos_[key], 1); }
  void OnInsert(CacheKey key) override {
    ++live_;
    Append(key);
  }
  // Entries the access log holds (live and superseded), for tests of its bound.
  size_t log_entries() const { return log_.size(); }

  CacheKey Evict() override {
    while (true) {
      if (head_ + 8 < log_.size()) __builtin_prefetch(&pos_[log_[head_ + 8]]);
      const CacheKey key = log_[head_];
      const uint32_t at = static_cast<uint32_t>(head_++);
      if (pos_[key] == at) {
        pos_[key] = kAbsent;
        --live_;
        return key;
      }
    }
  }

 private:
  static constexpr uint32_t kAbsent = ~uint32_t{0};

  // Inlined into every hit; the rare compaction is a call.
  [[gnu::always_inline]] void Append(CacheKey key) {
    pos_[key] = static_cast<uint32_t>(log_.size());
    log_.push_back(key);
    // Re-references pile up behind the head, and misses consume the front:
    // either way compaction keeps the log bounded (amortised O(1) per access).
    if (log_.size() - head_ > 2 * live_ + 1024 || head_ > log_.size() / 2 + 1024) Compact();
  }
  // Keeps the live entries, in order, from position 0. Every cached key's
  // position is rewritten, and a key not cached holds kAbsent, so no old
  // position can be mistaken for a new one (the log stays far below 2^32
  // entries: a small multiple of the cache's).
  // The loop is bound by its random reads of pos_, so it asks for them ahead
  // and keeps no branch on their values (a mispredicted one would stall them).
  [[gnu::noinline]] void Compact() {
    constexpr size_t kAhead = 16;
    const size_t end = log_.size();
    size_t out = 0;
    for (size_t i = head_; i < end; ++i) {
      if (i + kAhead < end) __builtin_prefetch(&pos_[log_[i + kAhead]], 1);
      const CacheKey key = log_[i];
      const uint32_t at = pos_[key];
      const uint32_t live = at == i;
      const uint32_t keep = live - 1;  // all ones for a superseded entry: pos_ unchanged
      pos_[key] = (at & keep) | (static_cast<uint32_t>(out) & ~keep);
      log_[out] = key;
      out += live;
    }
    log_.resize(out);
    head_ = 0;
  }

  std::vector<uint32_t> pos_;  // log position of each key's latest access
  std::vector<CacheKey> log_;  // accesses, oldest first, from head_
  size_t head_ = 0;
  size_t live_ = 0;
};

}  // namespace sparseflash
