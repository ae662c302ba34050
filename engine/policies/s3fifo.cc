// S3-FIFO (Yang et al., SOSP '23), as the reference (libCacheSim's S3FIFO): a
// small FIFO for new keys (10 % of the bytes), a main FIFO (the rest), and a
// ghost FIFO of keys recently evicted from the small one (90 % of the bytes'
// worth of entries). Room is made in main while it holds more than its share,
// else in the small FIFO, which gives up keys until one leaves the cache: a key
// hit `move_to_main_threshold` times (2) while small moves to main instead. A
// key re-inserted while remembered by the ghost goes straight to main and
// leaves the ghost; main reinserts keys that were hit (counting down a 2-bit
// frequency) instead of evicting them. Queue sizes are rounded as the
// reference rounds them (bytes truncated, then whole entries), so miss counts
// equal libCacheSim's on the same stream (docs/policies.md), except in a
// cache of about ten entries or fewer, where the reference caches nothing. All
// state is bounded by a small multiple of the entries.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class S3Fifo : public EvictionPolicy {
 public:
  explicit S3Fifo(const PolicyOptions& o)
      : threshold_(std::max(1, o.move_to_main_threshold)),
        freq_(o.key_space, 0),
        ghost_stamp_(o.key_space, 0) {
    const bool in_bytes = o.capacity_bytes > 0;
    const int64_t bytes = in_bytes ? o.capacity_bytes : o.capacity_entries;
    const int64_t entry = in_bytes ? std::max<int64_t>(1, o.entry_bytes) : 1;
    const auto small_bytes = static_cast<int64_t>(static_cast<double>(bytes) * o.small_queue_share);
    main_limit_ = (bytes - small_bytes) / entry;
    ghost_limit_ = static_cast<int64_t>(static_cast<double>(bytes) * o.ghost_queue_share) / entry;
  }

  void OnHit(CacheKey key) override {
    uint8_t& f = freq_[key];
    f = std::min<uint8_t>(f + 1, 3);
  }
  void OnInsert(CacheKey key) override {
    freq_[key] = 0;
    if (ghost_stamp_[key] != 0) {  // remembered: to main, and out of the ghost
      ghost_stamp_[key] = 0;
      --ghost_live_;
      main_.push_back(key);
    } else {
      small_.push_back(key);
    }
    // Trimmed after the lookup above, as the reference looks the ghost up
    // before it evicts for the new key.
    TrimGhost();
  }
  CacheKey Evict() override {
    while (true) {
      if (static_cast<int64_t>(main_.size()) > main_limit_ || small_.empty()) {
        if (auto victim = EvictMain()) return *victim;
        continue;
      }
      while (!small_.empty()) {
        if (auto victim = EvictSmall()) return *victim;
      }
    }
  }

 private:
  struct GhostEntry {
    CacheKey key;
    uint32_t stamp;  // live while it equals ghost_stamp_[key]
  };

  std::optional<CacheKey> EvictSmall() {
    CacheKey key = small_.front();
    small_.pop_front();
    if (freq_[key] >= threshold_) {  // hit often enough while small: promote
      freq_[key] = 0;
      main_.push_back(key);
      return std::nullopt;
    }
    Remember(key);
    return key;
  }
  std::optional<CacheKey> EvictMain() {
    CacheKey key = main_.front();
    main_.pop_front();
    if (freq_[key] > 0) {
      --freq_[key];
      main_.push_back(key);
      return std::nullopt;
    }
    return key;
  }
  void Remember(CacheKey key) {
    if (next_stamp_ == UINT32_MAX) CompactGhost();
    ghost_stamp_[key] = ++next_stamp_;
    ghost_.push_back({key, next_stamp_});
    ++ghost_live_;
  }
  bool Live(const GhostEntry& e) const { return ghost_stamp_[e.key] == e.stamp; }
  void TrimGhost() {
    while (!ghost_.empty() && (ghost_live_ > ghost_limit_ || !Live(ghost_.front()))) {
      if (Live(ghost_.front())) {
        ghost_stamp_[ghost_.front().key] = 0;
        --ghost_live_;
      }
      ghost_.pop_front();
    }
    // Entries of re-admitted keys wait behind live ones: drop them in bulk.
    if (static_cast<int64_t>(ghost_.size()) > 2 * ghost_limit_ + 1024) CompactGhost();
  }
  // Keeps only live entries, in order, stamped afresh from 1.
  void CompactGhost() {
    std::deque<GhostEntry> live;
    uint32_t stamp = 0;
    for (const GhostEntry& e : ghost_) {
      if (!Live(e)) continue;
      ghost_stamp_[e.key] = ++stamp;
      live.push_back({e.key, stamp});
    }
    ghost_.swap(live);
    next_stamp_ = stamp;
  }

  int64_t main_limit_ = 0;   // main gives up a key while it holds more entries
  int64_t ghost_limit_ = 0;  // the most entries the ghost remembers
  int threshold_;
  std::deque<CacheKey> small_, main_;
  std::deque<GhostEntry> ghost_;
  int64_t ghost_live_ = 0;
  uint32_t next_stamp_ = 0;
  std::vector<uint8_t> freq_;
  std::vector<uint32_t> ghost_stamp_;  // per key: its live ghost entry's stamp, 0 = none
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeS3Fifo(const PolicyOptions& o) {
  return std::make_unique<S3Fifo>(o);
}

}  // namespace sparseflash
