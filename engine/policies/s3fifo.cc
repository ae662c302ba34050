// S3-FIFO (Yang et al., SOSP '23): a small FIFO for new keys (10 % of the
// entries), a main FIFO, and a ghost FIFO of keys recently evicted from the
// small one. Keys hit while in the small queue move to main; keys re-inserted
// while remembered by the ghost go straight to main; main reinserts keys that
// were hit (up to 3 times) instead of evicting them.
#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include "engine/policies/policies.h"

namespace sparseflash {
namespace {

class S3Fifo : public EvictionPolicy {
 public:
  explicit S3Fifo(const PolicyOptions& o)
      : small_target_(std::max<int64_t>(1, o.capacity_entries * o.small_queue_share)),
        ghost_limit_(std::max<int64_t>(1, o.capacity_entries - small_target_)),
        freq_(o.key_space, 0),
        ghost_count_(o.key_space, 0) {}

  void OnHit(CacheKey key) override {
    uint8_t& f = freq_[key];
    f = std::min<uint8_t>(f + 1, 3);
  }
  void OnInsert(CacheKey key) override {
    freq_[key] = 0;
    if (ghost_count_[key] > 0) {
      main_.push_back(key);
    } else {
      small_.push_back(key);
    }
  }
  CacheKey Evict() override {
    while (true) {
      if (static_cast<int64_t>(small_.size()) >= small_target_ || main_.empty()) {
        if (auto victim = EvictSmall()) return *victim;
      } else if (auto victim = EvictMain()) {
        return *victim;
      }
    }
  }

 private:
  std::optional<CacheKey> EvictSmall() {
    CacheKey key = small_.front();
    small_.pop_front();
    if (freq_[key] > 0) {  // accessed again while small: promote
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
    ghost_.push_back(key);
    ++ghost_count_[key];
    while (static_cast<int64_t>(ghost_.size()) > ghost_limit_) {
      --ghost_count_[ghost_.front()];
      ghost_.pop_front();
    }
  }

  int64_t small_target_, ghost_limit_;
  std::deque<CacheKey> small_, main_, ghost_;
  std::vector<uint8_t> freq_;
  std::vector<uint16_t> ghost_count_;  // times a key is in the ghost queue
};

}  // namespace

std::unique_ptr<EvictionPolicy> MakeS3Fifo(const PolicyOptions& o) {
  return std::make_unique<S3Fifo>(o);
}

}  // namespace sparseflash
