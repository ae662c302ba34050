// Keys in the order of their latest access, kept as a log of accesses: an
// access appends its key and writes the key's position (one random write, no
// neighbours to relink, unlike a linked list), which supersedes the key's
// earlier entry; the front skips superseded entries. The log is compacted when
// superseded entries outnumber live ones twice over or when the front has
// consumed half of it, so it stays within a small multiple of the live keys.
// A compaction then reads 1.5 entries per append since the last (compacting
// at one superseded entry per live one, 2 per append, cost about 10 % more of
// a Mixtral simulation). Blanking a key's earlier entry on each access, so
// that the front reads no positions, was slower in the simulation both times
// it was tried (docs/policies.md). The recency order of LRU and of the
// sliding window's keys. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/eviction_policy.h"

namespace sparseflash {

class AccessLog {
 public:
  static constexpr CacheKey kNoKey = ~CacheKey{0};

  // `expected_live`: the most keys the log is expected to hold (0: unknown).
  // Its room is reserved at once: growing the log by doubling would copy it
  // and, past the allocator's mapping threshold, fault in fresh pages on every
  // run of a sweep.
  explicit AccessLog(uint32_t keys, size_t expected_live = 0) : pos_(keys, kAbsent) {
    if (expected_live > 0) log_.reserve(MostEntries(std::min<size_t>(expected_live, keys)));
  }

  bool empty() const { return live_ == 0; }
  size_t size() const { return live_; }
  // Entries the log holds (live and superseded), for tests of its bound.
  size_t entries() const { return log_.size(); }
  // Entries the log has room for before it must grow.
  size_t room() const { return log_.capacity(); }
  // Hints that `key` is appended or added soon.
  void Prefetch(CacheKey key) const { __builtin_prefetch(&pos_[key], 1); }

  // Makes a key the log holds the most recent.
  [[gnu::always_inline]] void Append(CacheKey key) {
    pos_[key] = static_cast<uint32_t>(log_.size());
    log_.push_back(key);
    // Re-references pile up behind the head, and removals consume the front:
    // either way compaction keeps the log bounded (amortised O(1) per access).
    if (log_.size() - head_ > 3 * live_ + 1024 || head_ > log_.size() / 2 + 1024) Compact();
  }
  // Adds a key the log does not hold, as the most recent.
  void Add(CacheKey key) {
    ++live_;
    Append(key);
  }
  // The least recent key; the log must not be empty.
  CacheKey Front() const {
    SkipSuperseded();
    return log_[head_];
  }
  // The key of the entry `n` places after the head (live or superseded), or
  // kNoKey past the end: for callers that prefetch their own state of the
  // keys about to reach the front.
  CacheKey Peek(size_t n) const { return head_ + n < log_.size() ? log_[head_ + n] : kNoKey; }
  // Removes and returns the least recent key; the log must not be empty.
  CacheKey PopFront() {
    SkipSuperseded();
    const CacheKey key = log_[head_++];
    pos_[key] = kAbsent;
    --live_;
    return key;
  }

 private:
  static constexpr uint32_t kAbsent = ~uint32_t{0};

  // The most entries the log holds with `live` keys (Append's two bounds):
  // at most 3 x live + 1025 from the head on, and a head at most half the log
  // plus 1024.
  static size_t MostEntries(size_t live) { return 2 * (3 * live + 1025) + 2048; }
  // Moves the head to the first live entry (the log holds one), asking for
  // the keys' positions a few entries ahead.
  void SkipSuperseded() const {
    while (true) {
      if (head_ + 8 < log_.size()) __builtin_prefetch(&pos_[log_[head_ + 8]]);
      if (pos_[log_[head_]] == head_) return;
      ++head_;
    }
  }
  // Keeps the live entries, in order, from position 0. Every live key's
  // position is rewritten, and a key not held has kAbsent, so no old position
  // can be mistaken for a new one (the log stays far below 2^32 entries: a
  // small multiple of the live keys'). The loop is bound by its random reads
  // of pos_, so it asks for them ahead and keeps no branch on their values (a
  // mispredicted one would stall them).
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

  std::vector<uint32_t> pos_;  // log position of each held key's latest access
  std::vector<CacheKey> log_;  // accesses, oldest first, from head_
  mutable size_t head_ = 0;    // entries before it are gone; Front() may skip ahead
  size_t live_ = 0;
};

}  // namespace sparseflash
